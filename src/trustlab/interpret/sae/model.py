"""Sparse autoencoders (SAEs) on a language model's activations: TopK and ReLU + L1.

An SAE with ``m`` latents on activations of width ``d`` encodes a row ``x`` as

    z = f((x - b_dec) W_enc + b_enc),        x_hat = z W_dec + b_dec,

with ``W_enc`` (d, m), ``W_dec`` (m, d) and ``f`` either TopK (the ``k`` largest
pre-activations kept, passed through ReLU, the others zero; Gao et al. 2024) or ReLU (with an L1
penalty on ``z`` in the loss; Bricken et al. 2023). These are sae_lens's "topk" and "standard"
architectures with ``apply_b_dec_to_input=True``, and :meth:`SparseAutoencoder.save` writes the
folder sae_lens reads (``cfg.json`` and ``sae_weights.safetensors``; ``SAE.load_from_disk``).

Training (:meth:`SparseAutoencoder.fit`), on rows such as the residual-stream activations
:func:`~trustlab.interpret.sae.activations.sae_activations` collects from a :class:`trustlab.llm.LocalModel`:

- the rows are scaled by one constant so that their mean norm is ``sqrt(d)`` (sae_lens's
  "expected_average_only_in" normalisation); because TopK and ReLU are positively homogeneous,
  the scale is folded into ``b_enc`` and ``b_dec`` after training and the stored SAE takes raw
  activations (``z`` comes out in raw units too);
- the decoder rows are kept at unit norm (renormalised after every Adam step, with the gradient
  component along each row removed first); ``W_enc`` starts as ``W_dec`` transposed and
  ``b_dec`` as the mean training row;
- loss: the squared reconstruction error summed over coordinates, averaged over rows, plus, for
  ReLU, ``l1_coefficient`` times the summed latent activations (the decoder rows have unit norm,
  so this is Bricken et al.'s norm-weighted L1);
- dead-latent resampling: a latent that fired on no training row since the last check is
  re-initialised (every ``resample_every`` steps, until 80 % of training): its decoder row
  becomes the direction of a training row drawn with probability proportional to its squared
  reconstruction error, its encoder column that direction times 0.2 times the mean norm of the
  live encoder columns, its encoder bias zero, and its Adam moments are reset (Bricken et al.,
  "Towards Monosemanticity", 2023).

torch is imported only when an SAE is trained or applied; safetensors only when one is saved or
loaded.

Why this module is long: one estimator whose fit, encoding, torch path, given weights
(:meth:`SparseAutoencoder.from_weights`), saving in sae_lens's format and loading share one
fitted state; training itself lives in ``_training.py``; numpydoc docstrings are much of the rest.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_device,
    check_in_range,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
    check_rows,
    resolve_device,
)
from trustlab._lazy import require
from trustlab._model_files import read_saved_params, read_saved_safetensors, storable_params
from trustlab._progress import check_progress
from trustlab._renamed import renamed_attribute, renamed_keys
from trustlab._results import (
    Result,
    internal_field,
    json_text,
    new_axes,
    output_dir,
    replace_saved,
    saved_mapping,
)
from trustlab.errors import InputError, ResourceError
from trustlab.interpret.sae._training import activate, train_sae

__all__ = ["SparseAutoencoder", "SAEFit", "load_sae", "ACTIVATIONS"]

#: The latent activation functions: TopK (sae_lens "topk") and ReLU + L1 (sae_lens "standard").
ACTIVATIONS = ("topk", "relu")
_ARCHITECTURE = {"topk": "topk", "relu": "standard"}
CFG_FILE = "cfg.json"  # sae_lens's names
WEIGHTS_FILE = "sae_weights.safetensors"
TRUSTLAB_FILE = "trustlab_sae.json"  # our parameters, history and fit, beside sae_lens's files
FORMAT_VERSION = 1
WEIGHT_NAMES = ("W_enc", "b_enc", "W_dec", "b_dec")
# the sae_lens release whose configuration format the saved cfg.json follows
SAE_LENS_FORMAT = "6.0.0"
# The SAE computes in float32 in the rows' own units: rows whose largest magnitude lies outside
# this range overflow (NaN weights or scores) or sink to float32's subnormals (lost digits).
# Measured on planted rows of largest magnitude 14 times 1e-38 .. 1e36: the same decoder as
# unscaled to 1.2e-7 and FVU to 3e-8; times 1e-40 FVU 0.42 against 0.40, times 1e38 NaN.
_FLOAT32_RANGE = (1e-36, 1e36)


# ============================================================================== the fit result


@dataclass(frozen=True)
class SAEFit(Result):
    """How well a fitted :class:`SparseAutoencoder` reconstructs its rows, and how sparsely.

    Metrics are computed with the stored SAE in float64 on the held-out rows (on the training
    rows when none were held out).

    Attributes
    ----------
    activation : {"topk", "relu"}
    d_in, n_latents : int
    k : int or None
        Latents kept per row (TopK); None for ReLU.
    n_rows, n_held_out : int
        Rows in all, and rows held out of training (the metrics' rows when positive).
        ``n_held_out`` was ``n_heldout`` before (still readable, with a FutureWarning, for one
        release; files saved then are still read).
    epochs_run, n_steps : int
        Passes over the training rows, and Adam steps (``epochs_run`` was ``epochs`` before,
        ``n_steps`` was ``steps`` before review 57: ``fit.steps`` still reads, with a
        FutureWarning, for one release; files saved then are still read).
    fvu : float
        Fraction of variance unexplained, ``sum ||x - x_hat||^2 / sum ||x - mean(x)||^2``.
    mse : float
        Mean squared error per coordinate.
    l0 : float
        Mean number of non-zero latents per row.
    dead_fraction : float
        Share of latents that fire on none of the metric rows.
    n_resampled : int
        Latent re-initialisations during training (a latent may be counted more than once).
    scale : float
        The constant the rows were multiplied by during training (mean norm ``sqrt(d_in)``);
        folded into the biases of the stored SAE.
    history : tuple of dict
        Per epoch: ``epoch``, ``loss`` (training objective, scaled units), ``fvu`` (training
        rows, scaled units), ``l0`` and ``n_resampled`` (not in ``to_dict()``).
    """

    activation: str
    d_in: int
    n_latents: int
    k: int | None
    n_rows: int
    n_held_out: int
    epochs_run: int
    n_steps: int
    fvu: float
    mse: float
    l0: float
    dead_fraction: float
    n_resampled: int
    scale: float
    history: tuple = internal_field(default=())

    figure_name = "sae_fit.png"
    n_heldout = renamed_attribute("n_heldout", "n_held_out")  # the old name, for one release
    steps = renamed_attribute("steps", "n_steps")  # the old name, for one release

    @classmethod
    def from_dict(cls, values: dict[str, Any], history: Any = ()) -> SAEFit:
        """The fit back from its ``to_dict()``."""
        floats = ("fvu", "mse", "l0", "dead_fraction", "scale")
        ints = ("d_in", "n_latents", "n_rows", "n_held_out", "epochs_run", "n_steps", "n_resampled")
        values = saved_mapping(values, "values", "SAEFit")
        # keys of fits saved before the renames (epochs; n_heldout: review 56; steps: 57)
        values = renamed_keys(
            values, {"epochs": "epochs_run", "n_heldout": "n_held_out", "steps": "n_steps"}
        )
        return cls(
            activation=str(values["activation"]),
            k=None if values["k"] is None else int(values["k"]),
            history=tuple(dict(h) for h in history),
            **{n: int(values[n]) for n in ints},
            **{n: math.nan if values[n] is None else float(values[n]) for n in floats},
        )

    def summary(self) -> str:
        if self.n_steps == 0 and self.n_rows == 0:  # SparseAutoencoder.from_weights
            sparsity = f"k={self.k}" if self.k is not None else "ReLU"
            return f"{sparsity} SAE {self.d_in} -> {self.n_latents} latents: given weights"
        where = "held-out" if self.n_held_out else "training"
        sparsity = f"k={self.k}" if self.k is not None else "ReLU + L1"
        return (
            f"{sparsity} SAE {self.d_in} -> {self.n_latents} latents: {where} FVU "
            f"{self.fvu:.4g}, L0 {self.l0:.1f}, dead latents {100 * self.dead_fraction:.1f} %; "
            f"{self.epochs_run} epochs ({self.n_steps} steps) on {self.n_rows - self.n_held_out} rows, "
            f"{self.n_resampled} latents resampled"
        )

    def plot(self, ax: Any = None) -> Any:
        """Training FVU per epoch (log scale), with L0 on a second axis."""
        ax = new_axes(ax)
        epochs = [h["epoch"] for h in self.history]
        ax.plot(epochs, [h["fvu"] for h in self.history], marker="o", label="training FVU")
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_ylabel("FVU (training rows)")
        right = ax.twinx()
        right.plot(epochs, [h["l0"] for h in self.history], color="tab:orange", marker="s")
        right.set_ylabel("L0 (latents per row)", color="tab:orange")
        ax.set_title(f"SAE {self.d_in} -> {self.n_latents}: {self.summary().split(':')[1][:40]}")
        return ax


# ============================================================================== the estimator


class SparseAutoencoder(TransformerMixin, BaseEstimator):
    """A TopK or ReLU + L1 sparse autoencoder (see the module docstring for the model).

    Parameters
    ----------
    n_latents : int or None, default None
        Latents ``m``; None is ``expansion_factor * d``.
    expansion_factor : int, default 8
        Used when ``n_latents`` is None.
    activation : {"topk", "relu"}, default "topk"
    k : int, default 32
        Latents kept per row (TopK; at most ``n_latents``).
    l1_coefficient : float, default 5.0
        Weight of the summed latent activations in the loss (ReLU; the rows are scaled to mean
        norm ``sqrt(d)`` first, so the value does not depend on the activations' units).
    max_epochs : int, default 10
        Passes over the training rows.
    learning_rate : float or None, default None
        Adam's rate, constant, with a linear decay to 0 over the last 20 % of the steps. None is
        ``2e-4 / sqrt(n_latents / 2**14)`` (the scaling Gao et al. 2024 fitted for TopK SAEs).
    batch_size : int, default 1024
        Rows per Adam step.
    resample_dead : bool, default True
        Re-initialise latents that did not fire since the last check (module docstring).
    resample_every : int or None, default None
        Steps between checks; None is a fifth of the training steps (at least 1).
    validation_fraction : float, default 0.05
        Share of the rows held out (at random) for ``fit_``, and at least 2 rows when any (the
        FVU's denominator is their variance; with fewer than 3 rows none is held out); 0 reports
        on the training rows.
    random_state : None, int or numpy Generator, default 0
        Seeds the split, the initial weights, the order of rows and the resampling draws.

    Attributes
    ----------
    W_enc_ : ndarray (d, m), b_enc_ : ndarray (m,), W_dec_ : ndarray (m, d), b_dec_ : ndarray (d,)
        float32, in the raw units of the rows (the training scale folded in).
    d_in_, n_latents_ : int
        Width of the rows and number of latents (``n_features_in_`` is ``d_in_``).
    history_ : list of dict
        As :attr:`SAEFit.history`.
    fit_ : SAEFit
    model_name_ : str or None
    layer_ : int or None
        Where the rows came from, as given to :meth:`fit` (``layer`` is the 0-based decoder
        block whose output was read, "resid_post of block k").

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> atoms = rng.normal(size=(16, 8))
    >>> codes = rng.exponential(size=(2000, 16)) * (rng.random((2000, 16)) < 0.1)
    >>> sae = SparseAutoencoder(n_latents=32, k=4, max_epochs=5, batch_size=128).fit(codes @ atoms)
    >>> sae.encode(codes[:3] @ atoms).shape
    (3, 32)
    >>> int((sae.encode(codes[:3] @ atoms) > 0).sum(axis=1).max()) <= 4
    True
    """

    def __init__(
        self,
        n_latents: int | None = None,
        expansion_factor: int = 8,
        activation: str = "topk",
        k: int = 32,
        l1_coefficient: float = 5.0,
        max_epochs: int = 10,
        learning_rate: float | None = None,
        batch_size: int = 1024,
        resample_dead: bool = True,
        resample_every: int | None = None,
        validation_fraction: float = 0.05,
        random_state: Any = 0,
    ):
        self.n_latents = n_latents
        self.expansion_factor = expansion_factor
        self.activation = activation
        self.k = k
        self.l1_coefficient = l1_coefficient
        self.max_epochs = max_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.resample_dead = resample_dead
        self.resample_every = resample_every
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    # ------------------------------------------------------------------------------- fit

    def fit(
        self,
        X: Any,
        y: Any = None,
        *,
        model_name: str | None = None,
        layer: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> SparseAutoencoder:
        """Train on the rows of ``X`` (n, d): one activation vector a row.

        Parameters
        ----------
        X : array-like (n, d)
        y : ignored
        model_name : str or None
            The model the rows came from (stored as ``model_name_`` and in the saved config).
        layer : int or None
            Its 0-based decoder block ("resid_post of block k"; ``layer_``).
        progress : callable, optional
            Called with ``(steps done, steps in all)`` after each step.

        Returns
        -------
        self
        """
        torch = require("torch", "torch")
        X = check_rows(X, "X", estimator="SparseAutoencoder", min_rows=2)
        _check_float32_scale(X, "X", fitting=True)
        settings = self._settings(X.shape[1])
        if model_name is not None and not isinstance(model_name, str):
            raise InputError.bad("model_name", "a string or None", model_name)
        if layer is not None:
            layer = check_positive_int(layer, "layer", minimum=0)
        check_progress(progress)
        rng = settings["rng"]
        n_held = int(round(settings["validation_fraction"] * len(X)))
        if n_held == 1:  # one row has no variance: its FVU would be NaN
            n_held = 2
        n_held = min(n_held, len(X) - 1)
        if n_held == 1:  # 2 rows: no room for 2 held out and 1 to train on; report on training
            n_held = 0
        order = rng.permutation(len(X))
        held, train = np.sort(order[:n_held]), np.sort(order[n_held:])
        weights, history, steps, resampled, scale = train_sae(
            X[train].astype(np.float32), settings, progress, torch
        )
        for name, value in weights.items():
            setattr(self, name + "_", value)
        self.d_in_, self.n_latents_ = X.shape[1], settings["n_latents"]
        self.n_features_in_ = self.d_in_
        self.model_name_, self.layer_ = model_name, layer
        self.history_ = history
        rows = X[held] if n_held else X[train]
        fvu, mse, l0, alive = self._metrics(rows)
        self.fit_ = SAEFit(
            activation=settings["activation"],
            d_in=X.shape[1],
            n_latents=settings["n_latents"],
            k=settings["k"],
            n_rows=len(X),
            n_held_out=n_held,
            epochs_run=settings["max_epochs"],
            n_steps=steps,
            fvu=fvu,
            mse=mse,
            l0=l0,
            dead_fraction=1.0 - alive,
            n_resampled=resampled,
            scale=scale,
            history=tuple(history),
        )
        return self

    @classmethod
    def from_weights(
        cls,
        W_enc: Any,
        b_enc: Any,
        W_dec: Any,
        b_dec: Any,
        *,
        k: int | None = None,
        model_name: str | None = None,
        layer: int | None = None,
    ) -> SparseAutoencoder:
        """A fitted SAE with the given weights instead of trained ones (a latent planted by
        hand, a dictionary from elsewhere); it encodes by the module docstring's formula.

        Parameters
        ----------
        W_enc : array-like (d, m)
        b_enc : array-like (m,)
        W_dec : array-like (m, d)
        b_dec : array-like (d,)
        k : int or None, default None
            None gives a ReLU SAE, an int a TopK SAE keeping ``k`` latents (at most ``m``).
        model_name, layer : str or None, int or None
            Where its rows come from, as in :meth:`fit`.

        Returns
        -------
        SparseAutoencoder
            Weights stored as float32; ``fit_`` records no training (0 rows, NaN metrics).

        Examples
        --------
        >>> sae = SparseAutoencoder.from_weights(np.eye(2), [0.0, -1.0], np.eye(2), [0.0, 0.0])
        >>> sae.encode([[3.0, 0.5]])
        array([[3., 0.]], dtype=float32)
        """
        W_enc = as_float_array(W_enc, "W_enc", ndim=2)
        d, m = W_enc.shape
        weights = {
            "W_enc": W_enc,
            "b_enc": as_float_array(b_enc, "b_enc", shape=(m,)),
            "W_dec": as_float_array(W_dec, "W_dec", shape=(m, d)),
            "b_dec": as_float_array(b_dec, "b_dec", shape=(d,)),
        }
        if k is not None and check_positive_int(k, "k") > m:
            raise InputError.bad("k", f"None or at most the {m} latents", k)
        if model_name is not None and not isinstance(model_name, str):
            raise InputError.bad("model_name", "a string or None", model_name)
        layer = None if layer is None else check_positive_int(layer, "layer", minimum=0)
        activation = "relu" if k is None else "topk"
        sae = cls(n_latents=m, activation=activation, **({} if k is None else {"k": int(k)}))
        nan = math.nan
        fit = SAEFit(activation, d, m, None if k is None else int(k), n_rows=0, n_held_out=0,
                     epochs_run=0, n_steps=0, fvu=nan, mse=nan, l0=nan, dead_fraction=nan,
                     n_resampled=0, scale=1.0)  # fmt: skip
        return _install(sae, weights, model_name, layer, [], fit)

    # ------------------------------------------------------------------------------- apply

    def encode(
        self, X: Any, *, sparse: bool = False, batch_size: int = 4096, device: str = "cpu"
    ) -> Any:
        """The latent activations ``z`` of each row of ``X`` (n, d).

        Returns an ndarray (n, n_latents) of float32, or with ``sparse=True`` a
        ``scipy.sparse.csr_matrix`` (encoded ``batch_size`` rows at a time, so a long corpus
        never needs the dense matrix).

        ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``): where the rows are
        encoded, in float32 (torch on a GPU); the result comes back to the CPU all the same. A
        GPU sums in another order, so a latent whose pre-activation ties another's to float32
        rounding can be chosen on one device and not the other.
        """
        X = self._check_rows(X, "X")
        batch_size = check_positive_int(batch_size, "batch_size")
        sparse = check_bool(sparse, "sparse")
        if check_device(device) != "cpu":
            torch = require("torch", "llm")
            where = resolve_device(torch, device)
            if where != "cpu":
                return self._encode_on(X, where, sparse, batch_size, torch)
        if not sparse:
            return np.concatenate(
                [self._encode(X[s : s + batch_size]) for s in range(0, len(X), batch_size)]
                or [np.zeros((0, self.n_latents_), np.float32)]
            )
        scipy_sparse = require("scipy.sparse", "scipy")
        blocks = [
            scipy_sparse.csr_matrix(self._encode(X[s : s + batch_size]))
            for s in range(0, len(X), batch_size)
        ]
        if not blocks:
            return scipy_sparse.csr_matrix((0, self.n_latents_), dtype=np.float32)
        return scipy_sparse.vstack(blocks, format="csr")

    def _encode_on(
        self, X: np.ndarray, where: str, sparse: bool, batch_size: int, torch: Any
    ) -> Any:
        """:meth:`encode` with torch on the device ``where``."""
        w_enc, b_enc, b_dec = (
            torch.as_tensor(getattr(self, n + "_"), dtype=torch.float32).to(where)
            for n in ("W_enc", "b_enc", "b_dec")
        )
        blocks = []
        with torch.inference_mode():
            for s in range(0, len(X), batch_size):
                x = torch.as_tensor(X[s : s + batch_size], dtype=torch.float32).to(where)
                blocks.append(activate((x - b_dec) @ w_enc + b_enc, self.activation, self.k, torch))
            z = torch.cat(blocks) if blocks else torch.zeros((0, self.n_latents_), device=where)
            if not sparse:
                return z.cpu().numpy()
            rows, cols = z.nonzero(as_tuple=True)
            values = z[rows, cols]
            rows, cols, values = (t.cpu().numpy() for t in (rows, cols, values))
        scipy_sparse = require("scipy.sparse", "scipy")
        return scipy_sparse.csr_matrix((values, (rows, cols)), shape=(len(X), self.n_latents_))

    def transform(self, X: Any) -> np.ndarray:
        """:meth:`encode` (dense), for scikit-learn pipelines."""
        return self.encode(X)

    def decode(self, Z: Any) -> np.ndarray:
        """``z W_dec + b_dec`` for each row of ``Z`` (n, n_latents; dense or scipy sparse; no
        rows gives no rows, as :meth:`encode` does)."""
        check_is_fitted(self, "fit_")
        if hasattr(Z, "tocsr"):
            Z = Z.tocsr()
            if Z.ndim != 2 or Z.shape[1] != self.n_latents_:
                raise InputError.bad("Z", f"{self.n_latents_} columns (the latents)", Z)
            stored = Z.tocoo()  # the dense path's finiteness check, on the stored entries
            bad = ~np.isfinite(stored.data)
            if bad.any():
                i = int(np.argmax(bad))
                where = (int(stored.row[i]), int(stored.col[i]))
                raise InputError(
                    f"Z: expected finite values, got {stored.data[i]} at index {where} "
                    f"({int(bad.sum())} non-finite value(s) in all)",
                    argument="Z",
                )
            return np.asarray(Z @ self.W_dec_, dtype=np.float32) + self.b_dec_
        Z = as_float_array(Z, "Z", ndim=2, min_size=0)
        if Z.shape[1] != self.n_latents_:
            raise InputError.bad("Z", f"{self.n_latents_} columns (the latents)", Z)
        return (Z.astype(np.float32) @ self.W_dec_ + self.b_dec_).astype(np.float32)

    def reconstruct(self, X: Any) -> np.ndarray:
        """``decode(encode(X))``."""
        return self.decode(self.encode(X))

    def apply_torch(self, hidden_states: Any) -> Any:
        """``(encoded, reconstructed)`` of a torch tensor (..., d) in its dtype and device (for
        forward hooks)."""
        torch = require("torch", "torch")
        check_is_fitted(self, "fit_")
        self._check_encoding()
        if not torch.is_tensor(hidden_states) or hidden_states.shape[-1] != self.d_in_:
            raise InputError.bad(
                "hidden_states", f"a torch tensor whose last dimension is {self.d_in_}",
                hidden_states,
            )  # fmt: skip
        w_enc, b_enc, w_dec, b_dec = (
            torch.as_tensor(getattr(self, n + "_")).to(hidden_states.dtype).to(
                hidden_states.device
            )
            for n in WEIGHT_NAMES
        )  # fmt: skip
        z = activate((hidden_states - b_dec) @ w_enc + b_enc, self.activation, self.k, torch)
        return z, z @ w_dec + b_dec

    # ------------------------------------------------------------------------------- storage

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``cfg.json`` and ``sae_weights.safetensors`` (sae_lens's format: its
        ``SAE.load_from_disk`` reads the folder) and ``trustlab_sae.json`` (parameters, history,
        fit) into ``directory``; return it. :func:`load_sae` reads it back."""
        check_is_fitted(self, "fit_")
        self._check_encoding()  # load_sae refuses a folder whose activation or k encode cannot read
        stated = None if self.n_latents is None else check_positive_int(self.n_latents, "n_latents")
        if stated is not None and stated != self.n_latents_:  # set_params after fit: load_sae
            raise InputError.bad(  # refused the folder ("its settings give 16 latents, its weights 8")
                "n_latents", f"None or the {self.n_latents_} latents of the fitted weights (fit "
                "again for another number)", self.n_latents,
            )  # fmt: skip
        if not isinstance(directory, (str, os.PathLike)):
            raise InputError.bad("directory", "a folder path", directory)
        out = output_dir(directory, "directory")
        safetensors = require("safetensors.numpy", "llm")
        arrays = {n: np.ascontiguousarray(getattr(self, n + "_")) for n in WEIGHT_NAMES}
        cfg = json_text(self.sae_lens_config())
        info = {
            "format_version": FORMAT_VERSION,
            "params": storable_params(self),
            "d_in": self.d_in_,
            "n_latents": self.n_latents_,
            "model_name": self.model_name_,
            "layer": self.layer_,
            "history": self.history_,
            "fit": self.fit_.to_dict(),
        }
        text = json_text(info)
        # whole or absent (replace_saved): stopped in the weights' write, the earlier SAE stays
        # whole; later, the folder lacks trustlab_sae.json, so nothing loads (never the new
        # weights under the old k, layer and fit)
        replace_saved(
            out,
            {WEIGHTS_FILE: lambda tmp: safetensors.save_file(arrays, str(tmp))},
            {CFG_FILE: cfg, TRUSTLAB_FILE: text},
        )
        return out

    def sae_lens_config(self) -> dict[str, Any]:
        """The ``cfg.json`` sae_lens (6.x) reads: architecture, widths, ``k``, and metadata
        (the model, and the hook in TransformerLens's naming, ``blocks.<k>.hook_resid_post``)."""
        check_is_fitted(self, "fit_")
        cfg: dict[str, Any] = {
            "architecture": _ARCHITECTURE[self.activation],
            "d_in": int(self.d_in_),
            "d_sae": int(self.n_latents_),
            "dtype": "float32",
            "device": "cpu",
            "apply_b_dec_to_input": True,
            "normalize_activations": "none",
            "reshape_activations": "none",
            "metadata": {
                "sae_lens_version": SAE_LENS_FORMAT,
                "sae_lens_training_version": None,
                "model_name": self.model_name_,
                "hook_name": None
                if self.layer_ is None
                else f"blocks.{self.layer_}.hook_resid_post",
                "hook_head_index": None,
                "prepend_bos": True,
                "trustlab_hook": None
                if self.layer_ is None
                else f"resid_post of block {self.layer_}",
            },
        }
        if self.activation == "topk":
            cfg["k"] = int(self.k)
            cfg["rescale_acts_by_decoder_norm"] = False
        return cfg

    # ------------------------------------------------------------------------------- helpers

    def check_params(self, d_in: int | None = None) -> None:
        """Check every parameter now, as ``fit`` does first: for a caller that has slow work to
        do before ``fit`` (loading a model, reading its activations). Without ``d_in`` the width
        is not known, so ``k`` is checked against ``n_latents`` only when that is given."""
        self._settings(2**20 if d_in is None else check_positive_int(d_in, "d_in"))

    def _settings(self, d_in: int) -> dict[str, Any]:
        activation = check_choice(self.activation, "activation", ACTIVATIONS)
        factor = check_positive_int(self.expansion_factor, "expansion_factor")
        n_latents = (
            factor * d_in
            if self.n_latents is None
            else check_positive_int(self.n_latents, "n_latents", minimum=2)
        )
        k = check_positive_int(self.k, "k")
        if activation == "topk" and k > n_latents:
            raise InputError.bad("k", f"at most n_latents ({n_latents})", k)
        rate = self.learning_rate
        rate = 2e-4 / math.sqrt(n_latents / 2**14) if rate is None else check_positive(
            rate, "learning_rate"
        )  # fmt: skip
        every = self.resample_every
        return {
            "activation": activation,
            "n_latents": n_latents,
            "k": k if activation == "topk" else None,
            "l1_coefficient": check_non_negative(self.l1_coefficient, "l1_coefficient"),
            "max_epochs": check_positive_int(self.max_epochs, "max_epochs"),
            "learning_rate": rate,
            "batch_size": check_positive_int(self.batch_size, "batch_size"),
            "resample_dead": check_bool(self.resample_dead, "resample_dead"),
            "resample_every": None
            if every is None
            else check_positive_int(every, "resample_every"),  # fmt: skip
            "validation_fraction": check_in_range(
                self.validation_fraction, "validation_fraction", 0.0, 1.0, high_open=True
            ),
            "rng": check_random_state(self.random_state),
        }

    def _check_encoding(self) -> None:
        """``activation`` and ``k`` as encoding reads them (``set_params`` may have changed
        them since the fit): k=0 gave all-zero codes, an unknown activation TopK's."""
        if check_choice(self.activation, "activation", ACTIVATIONS) == "topk":
            if check_positive_int(self.k, "k") > self.n_latents_:
                raise InputError.bad("k", f"at most n_latents ({self.n_latents_})", self.k)

    def _check_rows(self, X: Any, name: str) -> np.ndarray:
        check_is_fitted(self, "fit_")
        self._check_encoding()
        X = check_rows(X, name, estimator="SparseAutoencoder", n_features=self.d_in_,
                       min_rows=0)  # fmt: skip
        _check_float32_scale(X, name)
        return X

    def _encode(self, X: np.ndarray) -> np.ndarray:
        pre = (X.astype(np.float32) - self.b_dec_) @ self.W_enc_ + self.b_enc_
        if self.activation == "relu":
            return np.maximum(pre, 0.0).astype(np.float32)
        keep = np.argpartition(-pre, self.k - 1, axis=1)[:, : self.k]
        z = np.zeros_like(pre, dtype=np.float32)
        np.put_along_axis(z, keep, np.maximum(np.take_along_axis(pre, keep, axis=1), 0.0), 1)
        return z

    def _metrics(self, X: np.ndarray) -> tuple[float, float, float, float]:
        """FVU, MSE per coordinate, L0 and the share of latents firing, in float64."""
        Z = np.concatenate([self._encode(X[s : s + 4096]) for s in range(0, len(X), 4096)])
        decoded = Z.astype(np.float64) @ self.W_dec_.astype(np.float64) + self.b_dec_
        residual = X.astype(np.float64) - decoded
        total = float(((X - X.mean(axis=0)) ** 2).sum())
        sse = float((residual**2).sum())
        fvu = sse / total if total > 0 else math.nan
        fired = (Z > 0).any(axis=0)
        return fvu, sse / X.size, float((Z > 0).sum(axis=1).mean()), float(fired.mean())


def _check_float32_scale(X: np.ndarray, name: str, *, fitting: bool = False) -> None:
    """Refuse rows beyond ``_FLOAT32_RANGE`` (too small only when ``fitting``: encoding
    tiny rows with a fitted SAE loses nothing of note)."""
    low, high = _FLOAT32_RANGE
    top = float(np.abs(X).max()) if X.size else 0.0
    if top > high or (fitting and 0.0 < top < low):
        raise InputError.bad(
            name,
            f"values whose largest magnitude lies within [{low:g}, {high:g}] (the SAE computes "
            "in float32 in the rows' units)",
            f"a largest magnitude of {top:.3g}",
        )


# ============================================================================== loading


def load_sae(directory: str | os.PathLike) -> SparseAutoencoder:
    """Read an SAE written by :meth:`SparseAutoencoder.save` from its folder."""
    if not isinstance(directory, (str, os.PathLike)):
        raise InputError.bad("directory", "a folder path", directory)
    folder = Path(directory)
    info = read_saved_params(
        folder, TRUSTLAB_FILE, WEIGHTS_FILE, "SparseAutoencoder.save", FORMAT_VERSION,
        keys=("d_in", "n_latents", "fit", "history", "model_name", "layer"),
    )  # fmt: skip
    try:
        sae = SparseAutoencoder(**info["params"])
    except TypeError as exc:  # a setting this SparseAutoencoder does not have
        raise ResourceError(f"{folder / TRUSTLAB_FILE}: {exc}") from exc
    arrays = read_saved_safetensors(folder / WEIGHTS_FILE)
    if set(arrays) != set(WEIGHT_NAMES):
        raise ResourceError(
            f"{folder / WEIGHTS_FILE}: expected the arrays {WEIGHT_NAMES}, got {sorted(arrays)}"
        )
    d_in, n_latents = int(info["d_in"]), int(info["n_latents"])
    shapes = {"W_enc": (d_in, n_latents), "b_enc": (n_latents,), "W_dec": (n_latents, d_in),
              "b_dec": (d_in,)}  # fmt: skip
    for name, value in arrays.items():
        if value.shape != shapes[name]:
            raise ResourceError(
                f"{folder / WEIGHTS_FILE}: {name} has shape {value.shape}, expected {shapes[name]}"
            )
    fit = SAEFit.from_dict(info["fit"], info["history"])
    sae = _install(sae, arrays, info["model_name"], info["layer"], info["history"], fit)
    # what encode reads (activation, k against the weights' latents) and a stated n_latents;
    # training settings are fit's to check (save writes a 1-latent SAE of given weights, or
    # one whose batch_size was set anew, and load read them back before review 64)
    try:
        sae._check_encoding()
        stated = None if sae.n_latents is None else check_positive_int(sae.n_latents, "n_latents")
    except InputError as exc:
        raise ResourceError(f"{folder / TRUSTLAB_FILE}: {exc}") from exc
    if stated is not None and stated != n_latents:
        raise ResourceError(
            f"{folder / TRUSTLAB_FILE}: its settings give {stated} latents, its weights {n_latents}"
        )
    return sae


def _install(
    sae: SparseAutoencoder, weights: dict[str, np.ndarray], model_name: str | None,
    layer: int | None, history: list, fit: SAEFit,
) -> SparseAutoencoder:  # fmt: skip
    """Set the fitted attributes of ``sae`` (weights as float32 copies) and return it."""
    for name in WEIGHT_NAMES:
        setattr(sae, name + "_", np.array(weights[name], dtype=np.float32))
    sae.d_in_, sae.n_latents_ = (int(n) for n in weights["W_enc"].shape)
    sae.n_features_in_ = sae.d_in_
    sae.model_name_, sae.layer_ = model_name, layer
    sae.history_ = list(history)
    sae.fit_ = fit
    return sae
