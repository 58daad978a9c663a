"""The latent cache: where each SAE latent fires over a corpus, stored sparsely.

:func:`cache_latents` runs each text (a context) through the model up to the SAE's block, encodes
every token's activation with the SAE and keeps the non-zero latent activations as records
(latent, context, position, activation), with each context's token ids. The first token of each
context is left out (a beginning-of-sequence token, or an attention sink; the spec filters BOS
positions). Records are grouped by latent (CSR-like), so one latent's records are one slice.

Long corpora checkpoint: with ``checkpoint=DIR`` every ``checkpoint_every`` texts are written to
``DIR`` as one ``.npz`` file (no pickle) as soon as they are done; a second call with the same
model (its name and a sha256 of its weights: two model folders ``a/tiny`` and ``b/tiny`` share
a name), SAE (weights, activation and k), layer, texts and ``checkpoint_every`` reads the
finished chunks instead of computing them again, so a crash or Ctrl-C loses at most one chunk.
A folder of a run that differs in any of these is refused, naming what differs; so is a folder
written before the weights were fingerprinted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_string_list
from trustlab._model_files import read_json_object, read_saved_arrays
from trustlab._progress import WorkCounter, check_progress
from trustlab._results import (
    Result,
    internal_field,
    json_text,
    new_axes,
    output_dir,
    replace_saved,
    write_atomic,
)
from trustlab.errors import InputError, ResourceError
from trustlab.interpret.sae.activations import texts_named, warn_past_context
from trustlab.interpret.sae.model import SparseAutoencoder

__all__ = ["LatentCache", "cache_latents", "load_latent_cache"]

_META = "cache.json"
_FORMAT = 1
#: The checkpoint's run record: 2 adds the fingerprint of the model's weights.
_CHECKPOINT_FORMAT = 2


@dataclass(frozen=True)
class LatentCache(Result):
    """Non-zero SAE latent activations over a corpus, grouped by latent.

    Attributes
    ----------
    model, layer : str, int
        The model and the 0-based block ("resid_post of block k") the SAE read.
    n_latents : int
    n_contexts, n_tokens : int
        Contexts (texts) and the tokens encoded (each context's first token left out).
    tokens : ndarray of int64 (all context tokens, first ones included), not in ``to_dict()``
    token_offsets : ndarray (n_contexts + 1,)
        Context ``c``'s token ids are ``tokens[token_offsets[c]:token_offsets[c + 1]]``.
    latent_offsets : ndarray (n_latents + 1,)
        Latent ``i``'s records are rows ``latent_offsets[i]:latent_offsets[i + 1]`` of the three
        arrays below (in context, then position order).
    contexts, positions : ndarray of int32
        Each record's context and its token index in that context (>= 1).
    activations : ndarray of float32
        Each record's latent activation (> 0).
    sae : str or None
        :func:`sae_fingerprint` of the SAE that encoded it (None in a cache written before it
        was recorded), not in ``to_dict()``.

    Properties: ``n_records``, ``firing_counts`` (records per latent) and, in ``to_dict()``,
    ``n_dead`` (latents with no record) and the median firing rate.
    """

    model: str
    layer: int
    n_latents: int
    n_contexts: int
    n_tokens: int
    tokens: np.ndarray = internal_field()
    token_offsets: np.ndarray = internal_field()
    latent_offsets: np.ndarray = internal_field()
    contexts: np.ndarray = internal_field()
    positions: np.ndarray = internal_field()
    activations: np.ndarray = internal_field()
    sae: str | None = internal_field(default=None)

    _dict_extras = ("n_records", "n_dead", "median_firing_rate")
    figure_name = "latent_firing.png"

    @property
    def n_records(self) -> int:
        return int(len(self.activations))

    @property
    def firing_counts(self) -> np.ndarray:
        """Records (tokens where it fires) per latent."""
        return np.diff(self.latent_offsets)

    @property
    def n_dead(self) -> int:
        return int((self.firing_counts == 0).sum())

    @property
    def median_firing_rate(self) -> float:
        """Median over latents of the share of tokens where each fires."""
        return float(np.median(self.firing_counts / max(self.n_tokens, 1)))

    def latent(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(contexts, positions, activations)`` of latent ``index``."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise InputError.bad("index", f"a latent index in [0, {self.n_latents - 1}]", index)
        if not 0 <= index < self.n_latents:
            raise InputError.bad("index", f"a latent index in [0, {self.n_latents - 1}]", index)
        rows = slice(self.latent_offsets[index], self.latent_offsets[index + 1])
        return self.contexts[rows], self.positions[rows], self.activations[rows]

    def context_tokens(self, context: int) -> np.ndarray:
        """The token ids of context ``context``."""
        return self.tokens[self.token_offsets[context] : self.token_offsets[context + 1]]

    def summary(self) -> str:
        return (
            f"latent cache of {self.model} block {self.layer}: {self.n_records} records of "
            f"{self.n_latents} latents over {self.n_tokens} tokens ({self.n_contexts} contexts); "
            f"{self.n_dead} latents never fire, median firing rate "
            f"{100 * self.median_firing_rate:.3g} %"
        )

    def plot(self, ax: Any = None) -> Any:
        """Histogram of the latents' firing rates (log10 of the share of tokens)."""
        ax = new_axes(ax)
        rates = self.firing_counts[self.firing_counts > 0] / max(self.n_tokens, 1)
        ax.hist(np.log10(rates), bins=40)
        ax.set_xlabel("log10 firing rate (share of tokens)")
        ax.set_ylabel("latents")
        ax.set_title(f"{self.model} block {self.layer}: {self.n_dead} latents never fire")
        return ax

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``latent_cache.npz`` and ``latent_cache.json`` into ``directory``."""
        out = output_dir(directory, "directory")
        arrays = {n: getattr(self, n) for n in _ARRAYS}
        info = {"format": _FORMAT, **{n: getattr(self, n) for n in _SCALARS}, "sae": self.sae}
        text = json_text(info)
        # whole or absent (replace_saved): stopped in the arrays' write, the earlier cache stays
        # whole; later, the folder holds no JSON, so nothing loads (never the new arrays under
        # the old model, layer and SAE fingerprint)
        replace_saved(
            out,
            {"latent_cache.npz": lambda tmp: _save_npz(tmp, arrays)},
            {"latent_cache.json": text},
        )
        return out


_ARRAYS = ("tokens", "token_offsets", "latent_offsets", "contexts", "positions", "activations")
_SCALARS = ("model", "layer", "n_latents", "n_contexts", "n_tokens")


def load_latent_cache(directory: str | os.PathLike) -> LatentCache:
    """Read a cache written by :meth:`LatentCache.save` (a damaged or partial folder: a
    ResourceError naming the file)."""
    if not isinstance(directory, (str, os.PathLike)):
        raise InputError.bad("directory", "a folder path", directory)
    folder = Path(directory)
    meta, data = folder / "latent_cache.json", folder / "latent_cache.npz"
    if not meta.is_file() or not data.is_file():
        raise ResourceError(f"{folder}: expected latent_cache.json and latent_cache.npz")
    info = read_json_object(meta, "LatentCache.save")
    if info.get("format") != _FORMAT:
        raise ResourceError(f"{meta}: format {info.get('format')!r}, this trustlab reads {_FORMAT}")
    missing = [n for n in _SCALARS if n not in info]
    if missing:
        raise ResourceError(f"{meta}: incomplete, it lacks {', '.join(missing)}")
    arrays = read_saved_arrays(data, _ARRAYS)
    return LatentCache(
        **{n: info[n] for n in _SCALARS}, **arrays,
        sae=info.get("sae"),  # None: written before it was recorded
    )  # fmt: skip


def sae_fingerprint(sae: SparseAutoencoder) -> str:
    """sha256 of a fitted SAE's weights and encoding (activation and k): what tells the SAE a
    cache was written with from another of the same shape."""
    digest = hashlib.sha256()
    for name in ("W_enc_", "b_enc_", "W_dec_", "b_dec_"):
        digest.update(np.ascontiguousarray(getattr(sae, name), dtype=np.float32).tobytes())
    digest.update(f"{sae.activation}:{sae.k if sae.activation == 'topk' else None}".encode())
    return digest.hexdigest()


def cache_latents(
    model: Any,
    sae: SparseAutoencoder,
    texts: Sequence[str],
    *,
    layer: int | None = None,
    batch_size: int = 8,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 256,
    progress: Callable[[int, int], None] | None = None,
    autocast: str | None = None,
) -> LatentCache:
    """Run ``texts`` through ``model`` and ``sae`` and keep where each latent fires.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    sae : SparseAutoencoder
        Fitted, of the model's width.
    texts : sequence of str
        The contexts (for example :func:`~trustlab.interpret.sae.corpus.pydoc_texts`).
    layer : int or None
        The block the SAE reads; None takes the one it was trained on (``sae.layer_``).
    batch_size : int, default 8
        Texts per forward pass.
    checkpoint : path or None
        A folder for finished chunks of texts (see the module docstring); None keeps nothing.
    checkpoint_every : int, default 256
        Texts per chunk.
    progress : callable, optional
        Called with ``(texts done, texts in all)``.
    autocast : None or "bfloat16"
        Run the model in bfloat16 (``LocalModel.activations``): about 2.5x faster on CPUs with
        bfloat16 instructions; the SAE still encodes in float32. Measured on SmolLM2 block 15
        with a trained SAE: each token's set of active latents agrees with float32's at a mean
        Jaccard index of 0.97, its strongest latent in 99 % of tokens.

    Returns
    -------
    LatentCache
    """
    check_progress(progress)  # before any work, not when first called
    needed = ("name", "n_layers", "hidden_size", "activations", "tokenizer")
    if any(not hasattr(model, a) for a in needed):
        raise InputError.bad("model", "a trustlab.llm.LocalModel", model)
    if not isinstance(sae, SparseAutoencoder) or not hasattr(sae, "fit_"):
        raise InputError.bad("sae", "a fitted SparseAutoencoder", sae)
    if sae.d_in_ != model.hidden_size:
        raise InputError(
            f"sae: expected an SAE of width {model.hidden_size} (the hidden size of "
            f"{model.name!r}), got one of width {sae.d_in_}"
            + (f" trained on {sae.model_name_!r}" if sae.model_name_ else ""),
            argument="sae",
        )
    texts = check_string_list(texts, "texts", what="texts")
    layer = sae.layer_ if layer is None else layer
    n = int(model.n_layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n:
        raise InputError.bad(
            "layer", f"a decoder layer of {model.name!r} in [0, {n - 1}] (the SAE records none)"
            if sae.layer_ is None else f"a decoder layer of {model.name!r} in [0, {n - 1}]",
            layer,
        )  # fmt: skip
    layer = int(layer)
    batch_size = check_positive_int(batch_size, "batch_size")
    if autocast not in (None, "bfloat16"):
        raise InputError.bad("autocast", 'None or "bfloat16"', autocast)
    every = check_positive_int(checkpoint_every, "checkpoint_every")
    folder = (
        None
        if checkpoint is None
        else _checkpoint_folder(checkpoint, model, sae, layer, texts, autocast, every)
    )
    warn_past_context(model, texts)
    counter = WorkCounter(progress, len(texts))
    chunks = []
    for start in range(0, len(texts), every):
        part = texts[start : start + every]
        path = None if folder is None else folder / f"chunk_{start // every:06d}.npz"
        if path is not None and path.is_file():
            chunk = _read_chunk(path)
            if len(chunk["lengths"]) != len(part):  # the run key makes this unreachable
                raise InputError(
                    f"checkpoint: {path} holds {len(chunk['lengths'])} texts where this run's "
                    f"chunk has {len(part)}; choose another folder or empty this one",
                    argument="checkpoint",
                )
            counter.advance(len(part))
        else:
            with texts_named(start):  # an empty text is named by its place in ``texts``
                chunk = _encode_chunk(model, sae, part, layer, batch_size, counter, autocast)
            if path is not None:
                write_atomic(path, lambda tmp, c=chunk: _save_npz(tmp, c))
        chunks.append(chunk)
    cache = _assemble(chunks, model.name, layer, sae.n_latents_)
    if cache.n_tokens == 0:  # every latent "never fires" over no token at all
        raise InputError.bad(
            "texts", "texts of at least 2 tokens (each text's first is left out)", texts
        )
    return dataclasses.replace(cache, sae=sae_fingerprint(sae))


def _encode_chunk(
    model: Any, sae: SparseAutoencoder, texts: list[str], layer: int, batch_size: int,
    counter: WorkCounter, autocast: str | None = None,
) -> dict[str, np.ndarray]:  # fmt: skip
    """One chunk's tokens and records (context indices local to the chunk)."""
    tokens, lengths, latents, contexts, positions, values = [], [], [], [], [], []
    # The whole chunk in one call: LocalModel.activations batches texts of similar token length
    # together (sorted over the chunk), so little of each forward pass is padding.
    extra = {} if autocast is None else {"autocast": autocast}
    rows = model.activations(
        texts, layer, "all", batch_size=batch_size, progress=counter.part(), **extra
    )
    encoded, owner, place = [], [], []  # the rows the SAE encodes, their text and position
    for index, (text, acts) in enumerate(zip(texts, rows, strict=True)):
        ids = np.asarray(model.tokenizer(text)["input_ids"], dtype=np.int64)
        if len(ids) != len(acts):
            raise ResourceError(
                f"{model.name}: {len(ids)} token ids but {len(acts)} activations for a text"
            )
        tokens.append(ids)
        lengths.append(len(ids))
        if len(acts) < 2:
            continue
        encoded.append(acts[1:])
        owner.append(np.full(len(acts) - 1, index, dtype=np.int32))
        place.append(np.arange(1, len(acts), dtype=np.int32))
    if encoded:  # the chunk's rows in one call, on the model's GPU when it runs on one
        # (blocks of 256 rows keep a CPU's dense pre-activations in cache: 4,096 were 7 % slower)
        device = _device_of(model)
        block = 256 if device == "cpu" else 4096
        z = sae.encode(np.concatenate(encoded), sparse=True, batch_size=block, device=device)
        z = z.tocoo()
        owner_rows, place_rows = np.concatenate(owner), np.concatenate(place)
        latents.append(z.col.astype(np.int32))
        contexts.append(owner_rows[z.row])
        positions.append(place_rows[z.row])
        values.append(z.data.astype(np.float32))

    def joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    return {
        "tokens": joined(tokens, np.int64),
        "lengths": np.asarray(lengths, dtype=np.int64),
        "latents": joined(latents, np.int32),
        "contexts": joined(contexts, np.int32),
        "positions": joined(positions, np.int32),
        "activations": joined(values, np.float32),
    }


def _device_of(model: Any) -> str:
    """The GPU a LocalModel's network is on, else "cpu" (where the SAE then encodes)."""
    device = str(getattr(getattr(model, "model", None), "device", "cpu"))
    return device if device.startswith("cuda") else "cpu"


def _assemble(chunks: list[dict[str, np.ndarray]], model: str, layer: int, m: int) -> LatentCache:
    lengths = np.concatenate([c["lengths"] for c in chunks])
    shift = np.cumsum([0] + [len(c["lengths"]) for c in chunks[:-1]])
    latents = np.concatenate([c["latents"] for c in chunks])
    contexts = np.concatenate([c["contexts"] + s for c, s in zip(chunks, shift, strict=True)])
    positions = np.concatenate([c["positions"] for c in chunks])
    values = np.concatenate([c["activations"] for c in chunks])
    order = np.lexsort((positions, contexts, latents))
    counts = np.bincount(latents, minlength=m)
    return LatentCache(
        model=model,
        layer=layer,
        n_latents=m,
        n_contexts=len(lengths),
        n_tokens=int(np.maximum(lengths - 1, 0).sum()),
        tokens=np.concatenate([c["tokens"] for c in chunks]),
        token_offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        latent_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        contexts=contexts[order].astype(np.int32),
        positions=positions[order].astype(np.int32),
        activations=values[order].astype(np.float32),
    )


def _checkpoint_folder(
    checkpoint: Any, model: Any, sae: SparseAutoencoder, layer: int, texts: list[str],
    autocast: str | None, every: int,
) -> Path:  # fmt: skip
    """The checkpoint folder; a folder of another run (model, SAE weights or encoding, layer,
    texts or chunk size) is refused."""
    if not isinstance(checkpoint, (str, os.PathLike)):
        raise InputError.bad("checkpoint", "a folder path or None", checkpoint)
    folder = output_dir(checkpoint, "checkpoint")
    digest = hashlib.sha256()
    for name in ("W_enc_", "b_enc_", "W_dec_", "b_dec_"):
        digest.update(np.ascontiguousarray(getattr(sae, name)).tobytes())
    run = {
        "format": _CHECKPOINT_FORMAT,
        "model": model.name,
        # the name alone is a model folder's last component: the weights tell models apart
        "weights": _weights_fingerprint(model),
        "layer": layer,
        "sae": digest.hexdigest(),
        "texts": _texts_digest(texts),
        "n_texts": len(texts),
        # what else decides a chunk: the SAE's encoding (the weights alone do not: k can be
        # set anew) and the texts per chunk (chunks are found by their number)
        "encoding": {"activation": str(sae.activation), "k": None if sae.k is None else int(sae.k)},
        "checkpoint_every": every,
        # only when set, so the folders of float32 runs written before the option still match
        **({} if autocast is None else {"autocast": autocast}),
    }
    meta = folder / _META
    if meta.is_file():
        try:
            found = json.loads(meta.read_text(encoding="utf-8"))
            what = "" if isinstance(found, dict) else f"a JSON {type(found).__name__}"
        except (OSError, ValueError) as exc:  # damaged: a raw JSONDecodeError before
            what = f"{type(exc).__name__}: {exc}"
        if what:
            raise InputError(
                f"checkpoint: {meta} could not be read as a checkpoint record ({what}); "
                "choose another folder or empty this one",
                argument="checkpoint",
            )
        if found.get("format") != _CHECKPOINT_FORMAT or "weights" not in found:
            raise InputError(
                f"checkpoint: {folder} holds the chunks of another run, written by an older "
                "trustlab whose record has no fingerprint of the model's weights (they may come "
                "from another model); start afresh: choose another folder or empty this one",
                argument="checkpoint",
            )
        if found != run:
            differs = sorted(k for k in {*run, *found} if found.get(k) != run.get(k))
            raise InputError(
                f"checkpoint: {folder} holds the chunks of another run (its {', '.join(differs)} "
                "differ); choose another folder or empty this one",
                argument="checkpoint",
            )
    else:
        write_atomic(meta, json_text(run))
    return folder


def _texts_digest(texts: list[str]) -> str:
    """sha256 of the texts joined by NUL (the key of folders written so far), or, when a text
    holds a NUL itself, of their JSON list: ["ab\\x00", "c"] and ["ab", "\\x00c"] joined alike.
    The JSON form starts with the byte 0xff, which no UTF-8 join holds (with a text prefix, the
    one text 'json:["a\\u0000b"]' had the key of ["a\\x00b"])."""
    if any("\x00" in text for text in texts):
        return hashlib.sha256(b"\xff" + json.dumps(texts).encode()).hexdigest()
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()


def _weights_fingerprint(model: Any) -> str | None:
    """sha256 over the names, dtypes, shapes and bytes of the parameters of a LocalModel's torch
    module (``model.model``, on any device); None for a model without one (duck-typed)."""
    named = getattr(getattr(model, "model", None), "named_parameters", None)
    if not callable(named):
        return None
    import torch

    digest, found = hashlib.sha256(), False
    with torch.no_grad():
        for name, param in named():
            digest.update(f"{name}:{param.dtype}:{tuple(param.shape)};".encode())
            if param.device.type != "meta":  # a meta tensor has no values to read
                flat = param.detach().cpu().contiguous().reshape(-1)
                digest.update(flat.view(torch.uint8).numpy())
            found = True
    return digest.hexdigest() if found else None


def _read_chunk(path: Path) -> dict[str, np.ndarray]:
    """A checkpointed chunk; a damaged one (BadZipFile, a missing array) is named as the
    checkpoint's fault, which --overwrite in ``sae cache`` clears."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            chunk = {name: saved[name] for name in saved.files}
        if "lengths" not in chunk:
            raise KeyError("lengths")
    except Exception as exc:  # not a zip, truncated, an object array: not what was written
        raise InputError(
            f"checkpoint: {path} could not be read as a checkpointed chunk ({type(exc).__name__}: "
            f"{exc}); choose another folder or empty this one",
            argument="checkpoint",
        ) from exc
    return chunk


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)
