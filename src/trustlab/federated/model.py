"""The torch side of UEFL: the vector-quantisation layer with extensible codebooks, a small
encoder/classifier for CPU, the optimiser of local training (``Adam``, shared with the safety
polytope from ``trustlab._adam``), and conversion between modules and
plain numpy arrays.

Everything that crosses an engine boundary (in-process or Flower) is a ``dict[str, ndarray]``
keyed like the module's state dict; codebooks live under ``vq.books.<index>``. The torch module
classes are created on first use, so importing this module needs no torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from trustlab._adam import Adam
from trustlab._lazy import require
from trustlab._numerics import seeded_torch
from trustlab.errors import InputError

__all__ = [
    "CODEBOOK_PREFIX",
    "VectorQuantizer",  # noqa: F822 - created on first use by __getattr__
    "Adam",
    "is_codebook_key",
    "codebook_key",
    "build_model",
    "model_arrays",
    "load_arrays",
]

CODEBOOK_PREFIX = "vq.books."


def __getattr__(name: str) -> Any:
    if name == "VectorQuantizer":
        return _modules()["VectorQuantizer"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_codebook_key(key: str) -> bool:
    """Whether an array name is a codebook (kept out of the shared average by default).

    Examples
    --------
    >>> is_codebook_key("vq.books.1"), is_codebook_key("head.1.weight")
    (True, False)
    """
    return key.startswith(CODEBOOK_PREFIX)


def codebook_key(book: int) -> str:
    """The array name of codebook ``book``."""
    return f"{CODEBOOK_PREFIX}{int(book)}"


def _modules():
    """The torch module classes, defined on first use so importing this file needs no torch."""
    global _MODULES
    if _MODULES is not None:
        return _MODULES
    torch = require("torch", "federated")
    nn, F = torch.nn, torch.nn.functional

    class VectorQuantizer(nn.Module):
        """Nearest-codeword quantisation of position vectors, with extensible codebooks.

        Book 0 is the shared book; a silo on book ``k > 0`` quantises against the union of
        book 0 and book k. The loss is ``||sg(z) - e||^2 + commitment * ||z - sg(e)||^2`` and
        gradients pass straight through the quantisation to the encoder. With
        ``task_gradient=True`` the codewords also receive the gradient of the output (the task
        loss), as well as the codebook loss; the encoder's gradient is the same either way.
        """

        def __init__(
            self, dim: int, n_codes: int, commitment: float = 0.25, task_gradient: bool = False
        ):
            super().__init__()
            self.dim, self.n_codes, self.commitment = dim, n_codes, commitment
            self.task_gradient = bool(task_gradient)
            self.books = nn.ParameterDict({"0": nn.Parameter(torch.randn(n_codes, dim))})
            self.active_book = 0

        def add_book(self, book: int, values=None) -> None:
            data = torch.zeros(self.n_codes, self.dim) if values is None else values
            self.books[str(int(book))] = nn.Parameter(torch.as_tensor(data).clone().float())

        def codewords(self):
            if self.active_book == 0:
                return self.books["0"]
            return torch.cat([self.books["0"], self.books[str(self.active_book)]], dim=0)

        def forward(self, z):
            codes = self.codewords()
            flat = z.reshape(-1, self.dim)
            with torch.no_grad():  # the choice of codeword has no gradient: record no graph
                # ||f||^2 + ||e||^2 - 2 f.e in one addmm (scaling by -2 is exact, so the same
                # floats as the sum and difference written out); min's index is argmin's (the
                # first of equal distances) at less cost (tests/federated/test_uefl_speed_review67_vq.py)
                distances = torch.addmm(
                    flat.pow(2).sum(1, keepdim=True) + codes.pow(2).sum(1), flat, codes.t(),
                    alpha=-2.0,
                )  # fmt: skip
                index = distances.min(dim=1).indices
            # index_select, not codes[index]: the same rows and the same summed gradient,
            # without the indexing parser and index_put's backward
            quantized = codes.index_select(0, index).view_as(z)
            loss = F.mse_loss(quantized, z.detach()) + self.commitment * F.mse_loss(
                quantized.detach(), z
            )
            if self.task_gradient:
                # Value: the codewords; gradient: to the codewords and, unchanged, to z.
                straight_through = quantized + (z - z.detach())
            else:
                straight_through = z + (quantized - z).detach()
            usage = torch.bincount(index, minlength=codes.shape[0]).float() / index.numel()
            perplexity = torch.exp(-(usage * torch.log(usage + 1e-10)).sum())
            return straight_through, loss, perplexity

    class HalvingMaxPool(torch.autograd.Function):
        """2 x 2 max pooling, stride 2, as ``max_pool2d``: the same maxima, the same indices
        (the first maximum of each window) and torch's own backward kernel on them. The forward
        runs in channels-last layout, several times faster on CPU for 16 channels than the
        default layout's kernel (the encoder's most expensive step)."""

        @staticmethod
        def forward(ctx, x):
            out, index = F.max_pool2d(
                x.contiguous(memory_format=torch.channels_last), 2, return_indices=True
            )
            index = index.contiguous()
            ctx.save_for_backward(x, index)
            return out.contiguous()

        @staticmethod
        def backward(ctx, grad):
            x, index = ctx.saved_tensors
            return torch.ops.aten.max_pool2d_with_indices_backward(
                grad.contiguous(), x, [2, 2], [2, 2], [0, 0], [1, 1], False, index
            )

    class MaxPool2(nn.Module):
        """``nn.MaxPool2d(2)`` by :class:`HalvingMaxPool` (no parameters, so the state dict's
        names are the same)."""

        def forward(self, x):
            return HalvingMaxPool.apply(x)

    class CNNEncoder(nn.Module):
        """Conv 3x3 - ReLU - max-pool 2 - conv 3x3 - ReLU on square one-channel images; the
        output positions (side/2)^2 are the vectors to quantise."""

        def __init__(self, side: int, dim: int, channels: int = 16):
            super().__init__()
            self.side = side
            self.net = nn.Sequential(
                nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), MaxPool2(),
                nn.Conv2d(channels, dim, 3, padding=1), nn.ReLU(),
            )  # fmt: skip
            self.positions = (side // 2) ** 2

        def forward(self, x):
            h = self.net(x.view(-1, 1, self.side, self.side))
            return h.flatten(2).transpose(1, 2)  # (batch, positions, channels)

    class MLPEncoder(nn.Module):
        """Linear - ReLU - linear - ReLU for flat features, reshaped to ``positions`` vectors."""

        def __init__(self, num_features: int, dim: int, positions: int = 4, hidden: int = 64):
            super().__init__()
            self.positions, self.dim = positions, dim
            self.net = nn.Sequential(
                nn.Linear(num_features, hidden), nn.ReLU(),
                nn.Linear(hidden, positions * dim), nn.ReLU(),
            )  # fmt: skip

        def forward(self, x):
            return self.net(x).view(-1, self.positions, self.dim)

    class UEFLNet(nn.Module):
        """Encoder, optional VQ layer, and an MLP head (Linear - GELU - Dropout - Linear -
        Dropout, the authors' head) on the flattened (quantised) positions."""

        def __init__(self, spec: Mapping[str, Any]):
            super().__init__()
            dim, self.seg = spec["dim"], spec.get("seg", 1)
            if spec["encoder"] == "cnn":
                self.encoder = CNNEncoder(math.isqrt(spec["num_features"]), dim)
            else:
                self.encoder = MLPEncoder(spec["num_features"], dim)
            self.vq = (
                VectorQuantizer(
                    dim // self.seg,
                    spec["n_codes"],
                    spec["commitment"],
                    task_gradient=spec.get("codeword_gradient", "codebook_loss") == "task",
                )
                if spec["use_vq"]
                else None
            )
            width = self.encoder.positions * dim
            p = spec["dropout"]
            self.head = nn.Sequential(
                nn.Flatten(), nn.Linear(width, spec["hidden"]), nn.GELU(), nn.Dropout(p),
                nn.Linear(spec["hidden"], spec["num_classes"]), nn.Dropout(p),
            )  # fmt: skip

        def quantized(self, x):
            """Encoder output after the VQ layer, with the VQ loss and perplexity."""
            z = self.features(x)
            if self.vq is None:
                zero = z.new_zeros(())
                return z, zero, zero
            return self.vq(z)

        def features(self, x):
            """The vectors to quantise: each position's channels cut into ``seg`` segments."""
            z = self.encoder(x)
            return z.reshape(z.shape[0], -1, z.shape[-1] // self.seg)

        def forward(self, x):
            q, loss, perplexity = self.quantized(x)
            return self.head(q), loss, perplexity

    _MODULES = {"VectorQuantizer": VectorQuantizer, "UEFLNet": UEFLNet, "MaxPool2": MaxPool2}
    return _MODULES


_MODULES: dict[str, Any] | None = None


def check_model_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Check that the data fit the encoder (a square image for the CNN)."""
    spec = dict(spec)
    if spec["encoder"] == "cnn":
        side = math.isqrt(spec["num_features"])
        if side * side != spec["num_features"] or side < 2 or side % 2:
            raise InputError.bad(
                "n_features",
                "square images with an even side (s * s features) for the CNN encoder; "
                "use encoder='mlp' for other data",
                spec["num_features"],
            )
    return spec


def build_model(spec: Mapping[str, Any], random_state: int = 0):
    """A :class:`UEFLNet` initialised from the seed ``random_state`` without touching torch's
    global stream."""
    require("torch", "federated")
    with seeded_torch(random_state):
        return _modules()["UEFLNet"](check_model_spec(spec))


def _encoder_features(model, X) -> np.ndarray:
    """The encoder's features of ``X``, one row per (example, position), in eval mode (UEFL's
    k-means codebook initialisation reads them)."""
    torch = require("torch", "federated")
    model.eval()
    with torch.no_grad():
        z = model.features(torch.as_tensor(X))
    return z.reshape(-1, z.shape[-1]).numpy()


def model_arrays(model, keys=None) -> dict[str, np.ndarray]:
    """float32 numpy copies of the module's state (all arrays, or those named in ``keys``)."""
    state = model.state_dict()
    names = state.keys() if keys is None else [k for k in state if k in set(keys)]
    return {k: state[k].detach().cpu().numpy().astype(np.float32, copy=True) for k in names}


def load_arrays(model, arrays: Mapping[str, np.ndarray]) -> None:
    """Copy arrays into the module by name; codebooks missing from the module are added."""
    torch = require("torch", "federated")
    own = model.state_dict()
    for key, value in arrays.items():
        if is_codebook_key(key) and key not in own and model.vq is not None:
            # a book the model lacks (a silo state's extension): None, text or another shape
            # was a raw torch TypeError / RuntimeError in the first forward pass
            shape = (model.vq.n_codes, model.vq.dim)
            book = np.asarray(value)
            if book.shape != shape or book.dtype.kind not in "biuf":
                raise InputError.bad(f"arrays[{key!r}]", f"a codebook of shape {shape}", book)
            model.vq.add_book(int(key[len(CODEBOOK_PREFIX) :]), book)
            continue
        if key not in own:
            raise InputError.bad("arrays", f"names of the model's parameters, e.g. {next(iter(own))!r}",
                                 key)  # fmt: skip
        target = own[key]
        if tuple(target.shape) != tuple(np.shape(value)):
            raise InputError.bad(
                f"arrays[{key!r}]", f"shape {tuple(target.shape)}", np.asarray(value)
            )
        with torch.no_grad():
            target.copy_(torch.as_tensor(np.asarray(value), dtype=target.dtype))
