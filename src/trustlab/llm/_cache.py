"""Reading model weights through transformers, and the safetensors cache of dequantized GGUFs.

A GGUF file is dequantized by transformers on the first load (tens of seconds) and saved with its
tokenizer as safetensors under ``<cache root>/models/<key>``; the next load reads that folder in
about a second. The key hashes what identifies the weights (the file's path, size and
modification time, or a packaged file's sha256), so a changed file is never served stale. The
cache is written to a temporary sibling folder and renamed into place, so a crash never leaves
half a cache; a cache that cannot be read is rebuilt with a warning.

torch, transformers, gguf and accelerate are imported only here, and only when a model loads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trustlab._lazy import require
from trustlab._paths import cache_root
from trustlab.errors import BackendError

# Bump when the cached folder layout changes, so old caches are not served.
CACHE_FORMAT = 1
# A temporary cache folder older than this is left over from a crash and may be removed.
STALE_TEMP_SECONDS = 3600.0


@dataclass(frozen=True)
class ModelSource:
    """Where a model's weights come from: a GGUF (cached after the first load) or an HF folder."""

    name: str
    kind: str  # "gguf" or "hf"
    path: Path | None  # the GGUF file or the folder; None while a packaged GGUF is unassembled
    identity: str  # what the cache key hashes: changes whenever the weights may have changed
    # writes the packaged GGUF into the folder it is given and returns the file's path
    assemble: Callable[[Path], Path] | None = field(default=None, compare=False, repr=False)

    @property
    def cache_key(self) -> str:
        digest = hashlib.sha256(f"{CACHE_FORMAT}|{self.identity}".encode()).hexdigest()[:16]
        slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in self.name)
        return f"{slug}-{digest}"


def file_identity(path: Path) -> str:
    """What a GGUF file's cache key hashes: its resolved path, size and modification time."""
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def load_weights(source: ModelSource, cache_dir: str | os.PathLike | None) -> tuple[Any, Any]:
    """The float32 transformers model and its tokenizer: an HF folder in place, a GGUF cached."""
    torch = require("torch", "llm")
    require("transformers", "llm")
    if source.kind == "hf":
        return _load_folder(source.path, torch)
    folder = cache_root(cache_dir) / "models" / source.cache_key
    return _load_cached_or_build(source, folder, torch)


def _load_cached_or_build(source: ModelSource, folder: Path, torch: Any) -> tuple[Any, Any]:
    if folder.is_dir():
        try:
            with quiet_transformers():  # a cached load takes a second
                return _load_folder(folder, torch)
        except Exception as exc:  # a damaged cache (disk full, edited by hand): rebuild it
            warnings.warn(
                f"the cached model in {folder} could not be read ({exc}); rebuilding it",
                RuntimeWarning,
                stacklevel=4,
            )
            shutil.rmtree(folder, ignore_errors=True)
    model, tokenizer = _load_source(source, folder.parent, torch)
    try:
        _write_cache(model, tokenizer, folder)
    except OSError as exc:  # a read-only or full disk: the model is still usable
        warnings.warn(
            f"could not cache the model in {folder} ({exc}); the next load reads the GGUF again",
            RuntimeWarning,
            stacklevel=4,
        )
    return model, tokenizer


def _load_source(source: ModelSource, scratch: Path, torch: Any) -> tuple[Any, Any]:
    """Read a GGUF through transformers (dequantizing it); assemble a packaged one first."""
    if source.path is not None:
        return _load_gguf(source.path, torch)
    with _scratch_folder(scratch) as tmp:
        return _load_gguf(source.assemble(Path(tmp)), torch)


def _scratch_folder(scratch: Path) -> tempfile.TemporaryDirectory:
    """A temporary folder beside the cache (same disk as the copy it becomes), or in the system's
    temporary folder when the cache root cannot be written: the model still loads, and writing
    the cache then warns, as for a GGUF file."""
    try:
        scratch.mkdir(parents=True, exist_ok=True)
        return tempfile.TemporaryDirectory(dir=scratch, prefix=".assemble-")
    except OSError:
        return tempfile.TemporaryDirectory(prefix="trustlab-assemble-")


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers' own progress bars ("Loading weights", "Writing model shards") off on stderr
    while the block runs; trustlab's CLI shows its own progress."""
    logging = require("transformers", "llm").utils.logging
    bars = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            logging.enable_progress_bar()


def _load_gguf(path: Path, torch: Any) -> tuple[Any, Any]:
    require("gguf", "llm")
    require("accelerate", "llm")  # transformers refuses GGUF files without it
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(
                path.parent, gguf_file=path.name, local_files_only=True
            )
            model = AutoModelForCausalLM.from_pretrained(
                path.parent, gguf_file=path.name, dtype=torch.float32, local_files_only=True
            )
    except (ValueError, KeyError, OSError, RuntimeError) as exc:
        raise BackendError(
            f"transformers could not load the GGUF file {path}: {_one_line(exc)}"
        ) from exc
    # The weights are plain float32 after dequantization; drop the GGUF marker so that
    # save_pretrained accepts the model (it refuses "quantized" models).
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return model, tokenizer


def _load_folder(folder: Path, torch: Any) -> tuple[Any, Any]:
    from safetensors import SafetensorError  # a dependency of transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(
                folder, dtype=torch.float32, local_files_only=True
            )
    except (ValueError, KeyError, OSError, RuntimeError, SafetensorError) as exc:
        # SafetensorError: a truncated or damaged model.safetensors
        raise BackendError(
            f"transformers could not load the model folder {folder}: {_one_line(exc)}"
        ) from exc
    return model, tokenizer


def _one_line(exc: BaseException) -> str:
    """transformers' reason on one line (some of its messages are numbered lists)."""
    return " ".join(str(exc).split())


def _write_cache(model: Any, tokenizer: Any, folder: Path) -> None:
    """Save into a temporary sibling folder, then rename it: a crash never leaves half a cache."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(folder)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        with quiet_transformers():
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        try:
            os.rename(tmp, folder)
        except OSError:
            if not folder.is_dir():  # not a lost race with another process: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale_temps(folder: Path) -> None:
    """Temporary folders a killed process left: this key's cache writes, any GGUF assembly."""
    now = time.time()
    for tmp in [*folder.parent.glob(f".{folder.name}.*.tmp"), *folder.parent.glob(".assemble-*")]:
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > STALE_TEMP_SECONDS:
                shutil.rmtree(tmp, ignore_errors=True)
