"""Activation maps between two models' residual streams, and transferring vectors through them.

An :class:`ActivationMap` M takes a source model's activation ``a_s`` (width d_s) at one layer to
the target model's activation ``a_t`` (width d_t) at another; it is fitted on *paired*
activations, the same text run through both models (:func:`paired_activations`). Two kinds:

- ``"affine"``: M(a) = A a + b; by default closed-form least squares (numpy ``lstsq`` on
  centred data; no training, no random numbers), or with ``solver="adam"`` trained by the same
  loop as the autoencoder (the spec's "Adam-trained affine mapper");
- ``"autoencoder"`` (Oozeer et al., ICML 2025; named so although input and output spaces
  differ): M(a) = W2 ReLU(W1 a + b1) + b2 with hidden width floor(sqrt(d_s d_t)), trained by Adam
  on the mean squared error with a cosine learning-rate decay, gradient clipping at norm 1 and
  early stopping on the held-out fraction of unexplained variance (FVU).

Paired activations come from two models that share a tokenizer (every token a pair;
``align="tokens"``), or from two different fast tokenizers aligned by character offsets: a
target token pairs with the source token whose span ends at the same character, other tokens
are dropped (``align="offsets"``; the rules are in :mod:`trustlab.safety.transfer._alignment`).
How the target model fares with its layer output replaced by M(a_s) (next-token loss, KL) is
:func:`trustlab.safety.transfer.fidelity.mapped_lm_loss`.

Layers follow the one hook convention of :mod:`trustlab.safety.transfer`: layer ``k`` is the
output of 0-based decoder block k ("resid_post of block k", Hugging Face's
``hidden_states[k + 1]``), as :meth:`trustlab.llm.LocalModel.activations` reads it.

A steering vector is transferred by mapping *activations*, not the vector (M is not linear):
``v_t = mean M(a_pos) - mean M(a_neg)`` (:func:`transfer_vector`); for an affine map this is
``A v_s``. :func:`random_like` draws the equal-norm random vector every transfer report shows as
its baseline.

torch (Adam training) and safetensors (storage) are imported only when needed.

Why this module is long: the estimator, its fit result, its storage, the paired activations it
is fitted on and the transfer of vectors through it share the map's fitted state and input
checks; the training loop and the numpydoc docstrings make up most of the length.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_in_range,
    check_positive,
    check_positive_int,
    check_random_state,
    check_string_list,
)
from trustlab._lazy import require
from trustlab._model_files import read_saved_params, read_saved_safetensors, storable_params
from trustlab._numerics import column_mean_scale, power_of_2
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
from trustlab.safety.transfer._alignment import boundary_pairs, token_ends
from trustlab.safety.transfer.vectors import KINDS as VECTOR_KINDS
from trustlab.safety.transfer.vectors import POSITIONS, SteeringVector

__all__ = [
    "ActivationMap",
    "MapFit",
    "paired_activations",
    "transfer_vector",
    "mapped_steering_vector",
    "random_like",
    "load_activation_map",
    "KINDS",
    "SOLVERS",
    "ALIGNMENTS",
]

KINDS = ("autoencoder", "affine")
#: How an affine map is fitted: closed-form least squares, or Adam (the autoencoder's loop)
SOLVERS = ("lstsq", "adam")
#: How :func:`paired_activations` pairs tokens: same token ids, or character-span ends
ALIGNMENTS = ("tokens", "offsets")
FORMAT_VERSION = 1
WEIGHTS_FILE = "activation_map.safetensors"
PARAMS_FILE = "activation_map.json"
# the fitted arrays of each kind: M(a) = coef a + intercept, or weight2 relu(weight1 a + bias1) + bias2
WEIGHT_NAMES = {
    "affine": ("coef", "intercept"),
    "autoencoder": ("weight1", "bias1", "weight2", "bias2"),
}
# a held-out FVU below (1 - this) x the reference resets the patience counter (the best weights
# are kept on any decrease)
IMPROVEMENT = 1e-3
# max_epochs=None: about this many Adam steps, in whole epochs (at least AUTO_EPOCHS[0], at most
# AUTO_EPOCHS[1]). Small maps get the many epochs they need; 10^5 token pairs get 10 epochs
# (about 80 s at 576 -> 640 on one core; benchmarks/bench_transfer.py), the spec's "1-3 epochs"
# from about 4 * 10^5 pairs on.
AUTO_STEPS = 3500
AUTO_EPOCHS = (3, 200)
_METRICS = ("mse", "cosine", "fvu", "r2")


# ============================================================================== the fit result


@dataclass(frozen=True)
class MapFit(Result):
    """How well an :class:`ActivationMap` reproduces the target activations.

    Every metric is computed with the stored map, in float64, on all rows and on the held-out
    rows (NaN, ``None`` in ``to_dict()``, when nothing was held out).

    Attributes
    ----------
    kind : str
        ``"affine"`` or ``"autoencoder"``.
    source_width, target_width : int
    n_rows, n_held_out : int
        Paired rows in all, and those held out of the fit (early stopping, held-out metrics).
    epochs : int
        Training epochs run (0 for the closed-form affine map).
    best_epoch : int
        The epoch whose weights were kept (0 for the affine map).
    stopped_early : bool
        Training stopped before ``max_epochs`` because the held-out FVU fell by less than
        ``IMPROVEMENT`` (0.1 %) over ``patience`` epochs: a slow-down, not a minimum (it may
        still have been falling; :meth:`summary` says whether the last epoch was the best).
    max_epochs : int
        The epochs allowed (the estimator's ``max_epochs``, or the number it chose for None; 0
        for the closed-form affine map).
    adam_steps : int
        Adam steps run, ``epochs`` x ceil(training rows / ``batch_size``) (0 for the closed-form
        affine map and in maps saved before review 57). Below ``AUTO_STEPS`` (3,500) in 200
        epochs (the cap of ``max_epochs=None``), :meth:`summary` says the fit may stop short.
    max_epochs_auto : bool
        ``max_epochs`` was chosen by ``max_epochs=None`` (in maps saved before review 58: taken
        as ``max_epochs == 200``). A ``max_epochs`` the user gave gets no note on the steps.
    mse : float
        Mean squared error per coordinate, ``mean((t - M(s))**2)``.
    cosine : float
        Mean over rows of the cosine between ``t`` and ``M(s)`` (rows where either is zero are
        left out).
    fvu : float
        Fraction of variance unexplained, ``sum ||t - M(s)||^2 / sum ||t - mean(t)||^2`` (NaN
        when the target rows do not vary).
    r2 : float
        ``1 - fvu``.
    held_out_mse, held_out_cosine, held_out_fvu, held_out_r2 : float
        The same on the held-out rows (``heldout_*`` before review 57: the old names still read,
        with a FutureWarning, for one release, and maps saved with them still load).
    history : tuple of dict
        Per epoch: ``epoch``, ``train_mse`` and ``held_out_fvu`` (not in ``to_dict()``).
    """

    kind: str
    source_width: int
    target_width: int
    n_rows: int
    n_held_out: int
    epochs: int
    best_epoch: int
    stopped_early: bool
    mse: float
    cosine: float
    fvu: float
    r2: float
    held_out_mse: float
    held_out_cosine: float
    held_out_fvu: float
    held_out_r2: float
    max_epochs: int = 0
    adam_steps: int = 0
    max_epochs_auto: bool = False
    history: tuple = internal_field(default=())

    figure_name = "activation_map_fit.png"
    n_heldout = renamed_attribute("n_heldout", "n_held_out")  # the old name, for one release
    heldout_mse = renamed_attribute("heldout_mse", "held_out_mse")  # the old names, for one
    heldout_cosine = renamed_attribute("heldout_cosine", "held_out_cosine")  # release
    heldout_fvu = renamed_attribute("heldout_fvu", "held_out_fvu")
    heldout_r2 = renamed_attribute("heldout_r2", "held_out_r2")

    @classmethod
    def from_dict(cls, values: dict[str, Any], history: Any = ()) -> MapFit:
        """The fit back from its ``to_dict()`` (``None`` metrics become NaN)."""
        names = [f"{prefix}{m}" for prefix in ("", "held_out_") for m in _METRICS]
        values = saved_mapping(values, "values", "MapFit")
        values = _renamed_keys(values)  # maps saved before reviews 56 / 57: n_heldout, heldout_*
        floats = {n: math.nan if values[n] is None else float(values[n]) for n in names}
        return cls(
            kind=str(values["kind"]),
            source_width=int(values["source_width"]),
            target_width=int(values["target_width"]),
            n_rows=int(values["n_rows"]),
            n_held_out=int(values["n_held_out"]),
            epochs=int(values["epochs"]),
            best_epoch=int(values["best_epoch"]),
            stopped_early=bool(values["stopped_early"]),
            max_epochs=int(values.get("max_epochs", 0)),  # absent in maps saved before 2026-12
            adam_steps=int(values.get("adam_steps", 0)),  # absent before review 57
            max_epochs_auto=bool(  # absent before review 58
                values.get("max_epochs_auto", int(values.get("max_epochs", 0)) == AUTO_EPOCHS[1])
            ),
            history=tuple(_renamed_keys(h) for h in history),
            **floats,
        )

    def summary(self) -> str:
        where = "held-out" if self.n_held_out else "training"
        fvu = self.held_out_fvu if self.n_held_out else self.fvu
        cosine = self.held_out_cosine if self.n_held_out else self.cosine
        training = (
            "closed form"
            if self.epochs == 0
            else f"{self.epochs} epochs of Adam (at most {self.max_epochs})"
        )
        if self.stopped_early:
            training += f", {self._stop_reason(where)}"
        if self.max_epochs_auto and self.max_epochs == AUTO_EPOCHS[1]:
            training += self._steps_note()
        return (
            f"{self.kind} map {self.source_width} -> {self.target_width}: {where} FVU "
            f"{fvu:.4g} (R^2 {1 - fvu:.4g}), mean cosine {cosine:.4f}; {self.n_rows} rows "
            f"({self.n_held_out} held out), {training}"
        )

    def _steps_note(self) -> str:
        """What the 200-epoch cap of max_epochs=None did to a fit of few rows ("" if it made
        ``AUTO_STEPS`` Adam steps): it ran 200 epochs, or stopped early with the cosine schedule
        (sized to those 200 epochs) having decayed the learning rate."""
        if not 0 < self.adam_steps < AUTO_STEPS:
            return ""
        if self.stopped_early:
            left = 0.5 * (1.0 + math.cos(math.pi * self.epochs / self.max_epochs))
            what = (
                f"the learning rate decays to 0 over the {self.max_epochs} epochs it allows and "
                f"was down to {left:.1%} of its start at epoch {self.epochs}"
            )
        else:
            what = f"its cap of {self.max_epochs} epochs bound: the fit may stop short"
        closed = "; solver='lstsq' fits an affine map exactly" if self.kind == "affine" else ""
        return (
            f"; only {self.adam_steps} Adam steps, fewer than the about {AUTO_STEPS:,} that "
            f"max_epochs=None aims at ({what}); more max_epochs or a smaller batch_size may "
            f"lower the FVU{closed}"
        )

    def _stop_reason(self, where: str) -> str:
        """Why training stopped early, as it was: the FVU fell less than ``IMPROVEMENT`` over
        the patience epochs, which is not a minimum (it may still have been falling)."""
        reference, since = math.inf, 0  # the rule of the training loop, replayed
        for h in self.history:
            if h["held_out_fvu"] < reference * (1.0 - IMPROVEMENT):
                reference, since = h["held_out_fvu"], h["epoch"]
        window = f"the last {self.epochs - since} epochs" if self.history else "the patience epochs"
        kept = (
            "kept the last epoch, the FVU still falling"
            if self.best_epoch == self.epochs
            else f"kept epoch {self.best_epoch}, its lowest"
        )
        return (
            f"stopped early: the {where} FVU fell less than {IMPROVEMENT:.1%} in {window} ({kept})"
        )

    def plot(self, ax: Any = None) -> Any:
        """The held-out FVU per epoch (log scale) with the kept epoch marked; for the
        closed-form affine map, its FVU on all and on held-out rows."""
        ax = new_axes(ax)
        if self.history:
            epochs = [h["epoch"] for h in self.history]
            ax.semilogy(epochs, [h["held_out_fvu"] for h in self.history], marker=".")
            ax.axvline(self.best_epoch, color="grey", linestyle="--", label="kept weights")
            ax.set_xlabel("epoch")
            ax.set_ylabel("held-out FVU" if self.n_held_out else "training FVU")
            ax.legend()
        else:
            ax.bar(["all rows", "held-out rows"], [self.fvu, self.held_out_fvu])
            ax.set_ylabel("FVU")
        ax.set_title(f"{self.kind} map {self.source_width} -> {self.target_width}")
        return ax


def _renamed_keys(values: Any) -> dict[str, Any]:
    """A saved fit or history entry with its old keys (n_heldout until review 56, heldout_* until
    review 57) under their names now (n_held_out, held_out_*)."""
    renamed = {"n_heldout": "n_held_out"} | {f"heldout_{m}": f"held_out_{m}" for m in _METRICS}
    return renamed_keys(values, renamed)


# ============================================================================== the estimator


class _Settings(NamedTuple):
    kind: str
    hidden: int | None
    max_epochs: int | None
    learning_rate: float
    batch_size: int
    validation_fraction: float
    patience: int
    rng: np.random.Generator
    solver: str


class ActivationMap(BaseEstimator):
    """A map from one model's activations at one layer to another's (affine or "autoencoder").

    Parameters
    ----------
    kind : {"autoencoder", "affine"}, default "autoencoder"
        ``"affine"``: M(a) = A a + b, fitted as ``solver`` says. ``"autoencoder"``: M(a) = W2
        ReLU(W1 a + b1) + b2, trained by Adam.
    hidden : int or None
        Hidden width of the autoencoder; None is floor(sqrt(d_s d_t)).
    max_epochs : int or None, default None
        Passes over the training rows at most. None sizes it to the data: as many epochs as make
        about ``AUTO_STEPS`` (3,500) Adam steps, between 3 and 200 (10 for 10^5 rows at the
        default batch size; 3 from about 3 x 10^5 rows on, the spec's "1-3 epochs" on real
        data). The number used is ``fit_.max_epochs``. The 200-epoch cap makes fewer steps
        below 4,353 training rows at batch 256: 400 rows get 400 steps, 3,000 rows 2,200
        (``fit_.adam_steps``; the summary then says so), and such maps under-fit (see Notes).
    learning_rate : float, default 1e-3
        Adam's initial learning rate, decayed to 0 over ``max_epochs`` on a cosine schedule.
    batch_size : int, default 256
        Rows per Adam step.
    validation_fraction : float, default 0.1
        Share of the rows held out (at random) of the fit, at least 2 rows when any (the FVU's
        denominator is their variance), for both kinds: early stopping watches their FVU and
        ``fit_`` reports them. 0 holds nothing out (early stopping then watches the training FVU). Rows are single tokens, so a text's tokens fall on both
        sides; for errors on unseen texts, transform the activations of other texts.
    patience : int, default 10
        Stop after this many epochs without a relative decrease of the held-out FVU of at least
        ``IMPROVEMENT`` (1e-3); the weights of the best epoch are kept.
    random_state : None, int or numpy Generator, default 0
        Seeds the held-out split, the initial weights and the order of the rows.
    solver : {"lstsq", "adam"}, default "lstsq"
        How an affine map is fitted: ``"lstsq"``, closed-form least squares with intercept (the
        training settings above other than ``validation_fraction`` are not used); ``"adam"``,
        trained by the autoencoder's loop (Adam, cosine decay, clipping, early stopping on the
        held-out FVU) with A and b as the only weights. The autoencoder ignores it.

    Attributes
    ----------
    source_width_, target_width_ : int
        d_s and d_t.
    coef_ : ndarray (d_t, d_s), intercept_ : ndarray (d_t,)
        The affine map (float64; ``kind="affine"``, either solver).
    weight1_ : ndarray (hidden, d_s), bias1_ : ndarray (hidden,), weight2_ : ndarray (d_t,
    hidden), bias2_ : ndarray (d_t,)
        The autoencoder (float32; ``kind="autoencoder"``), in the raw units of the activations.
    history_ : list of dict
        Per epoch: ``epoch``, ``train_mse`` (per coordinate, raw units) and ``held_out_fvu`` (the
        training rows' FVU when ``validation_fraction=0``); empty for the closed-form affine
        map.
    fit_ : MapFit
        Errors of the fitted map on all and on the held-out rows.
    source_model_, target_model_ : str or None
    source_layer_, target_layer_ : int or None
        What the paired activations came from, as given to :meth:`fit` (metadata).

    Notes
    -----
    Adam (the autoencoder, and the affine map with ``solver="adam"``) trains on standardised
    rows: each source coordinate is centred and divided by its standard deviation
    (massive-activation coordinates of language models would otherwise dominate the first
    layer), and the target rows are centred and divided by one common scale, their
    root-mean-square deviation, so that the loss stays proportional to the raw squared error and
    the FVU. After training the standardisation is folded into the weights, so the stored map is
    exactly M(a) = W2 ReLU(W1 a + b1) + b2 (or A a + b) on raw activations (float32 for the
    autoencoder, which therefore refuses source or target activations whose standard deviation
    lies outside ``FLOAT32_SPREAD``, 1e-30..1e30, whose mean passes +-1e30, or whose mean lies
    more than ``FLOAT32_OFFSET``, 1e6, standard deviations from 0). Adam
    moves each weight by about ``learning_rate`` a step: on few rows (few steps an epoch) the default
    stops short. On 400 noise-free linear rows (8 -> 6) the default autoencoder's held-out R^2
    was 0.35-0.41 and the Adam affine map's 0.43 (400 steps); ``batch_size=16`` (about 3,500
    steps) gave 0.91-0.96 and 0.999, ``solver="lstsq"`` gives the least-squares affine map
    exactly (R^2 1). On few rows pass a smaller ``batch_size`` or more ``max_epochs``.
    With fewer training rows than d_s + 1 the affine least-squares problem is underdetermined
    and ``lstsq`` returns, of the A that fit best, the one of least Frobenius norm, b following
    from the means (scikit-learn's ``LinearRegression`` gives the same): pair more tokens than
    the source width.
    The initial weights are uniform in +-1/sqrt(fan-in) (torch's ``Linear`` rule) from a private
    torch generator; torch's global random state is not used. Set torch's thread count before
    fitting (one thread is fastest for small maps).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> source = rng.normal(size=(500, 6))
    >>> target = source @ rng.normal(size=(6, 4)) + 1.0
    >>> m = ActivationMap(kind="affine").fit(source, target, source_model="a", target_model="b")
    >>> m.transform(source[:2]).shape
    (2, 4)
    >>> m.fit_.held_out_fvu < 1e-12
    True
    """

    def __init__(
        self,
        kind: str = "autoencoder",
        hidden: int | None = None,
        max_epochs: int | None = None,
        learning_rate: float = 1e-3,
        batch_size: int = 256,
        validation_fraction: float = 0.1,
        patience: int = 10,
        random_state: Any = 0,
        solver: str = "lstsq",
    ):
        self.kind = kind
        self.hidden = hidden
        self.max_epochs = max_epochs
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.random_state = random_state
        self.solver = solver

    def check_params(self) -> None:
        """Check every parameter now, as ``fit`` does first: for a caller with slow work to do
        before ``fit`` (loading the models, reading their paired activations)."""
        self._settings()

    def fit(
        self,
        source: Any,
        target: Any,
        *,
        source_model: Any = None,
        target_model: Any = None,
        source_layer: int | None = None,
        target_layer: int | None = None,
    ) -> ActivationMap:
        """Fit M on paired rows: ``source[i]`` and ``target[i]`` are the same token in both models.

        Parameters
        ----------
        source : array-like (n, d_s)
        target : array-like (n, d_t)
        source_model, target_model : str, a model with a ``name``, or None
            Stored as ``source_model_`` / ``target_model_`` (their names).
        source_layer, target_layer : int or None
            Stored as ``source_layer_`` / ``target_layer_``.

        Returns
        -------
        self
        """
        settings = self._settings()
        S = as_float_array(source, "source", ndim=2)
        T = as_float_array(target, "target", ndim=2)
        if len(T) != len(S):
            raise InputError.bad("target", f"{len(S)} rows, one per row of source", T)
        names = {
            "source_model": _model_name(source_model, "source_model"),
            "target_model": _model_name(target_model, "target_model"),
            "source_layer": _optional_layer(source_layer, "source_layer"),
            "target_layer": _optional_layer(target_layer, "target_layer"),
        }
        train, held = _split(len(S), settings.validation_fraction, settings.rng)
        if settings.kind == "affine" and settings.solver == "lstsq":
            weights = _fit_affine(S[train], T[train])
            history: list[dict[str, float]] = []
            epochs = best = allowed = steps = 0
            stopped = False
        else:
            watch = held if len(held) else train
            hidden = None
            if settings.kind == "autoencoder":
                hidden = settings.hidden or math.isqrt(S.shape[1] * T.shape[1])
            allowed = settings.max_epochs or auto_epochs(len(train), settings.batch_size)
            settings = settings._replace(max_epochs=allowed)
            weights, history, best, stopped = _train_adam(
                S[train], T[train], S[watch], T[watch], hidden, settings
            )
            epochs = len(history)
        steps = epochs * math.ceil(len(train) / settings.batch_size)
        for name, value in weights.items():
            setattr(self, name + "_", value)
        self.source_width_, self.target_width_ = S.shape[1], T.shape[1]
        for name, value in names.items():
            setattr(self, name + "_", value)
        self.history_ = history
        self._torch_cache: dict[Any, tuple] = {}
        predicted = self._apply(S)
        held_metrics = _metrics(T[held], predicted[held]) if len(held) else (math.nan,) * 4
        self.fit_ = MapFit(
            settings.kind,
            S.shape[1],
            T.shape[1],
            len(S),
            len(held),
            epochs,
            best,
            stopped,
            *_metrics(T, predicted),
            *held_metrics,
            max_epochs=allowed,
            adam_steps=steps,
            max_epochs_auto=self.max_epochs is None,
            history=tuple(history),
        )
        return self

    def transform(self, source: Any) -> np.ndarray:
        """M applied to each row of ``source`` (n, d_s); returns (n, d_t) float32."""
        return self._apply(self._check_source(source, "source")).astype(np.float32)

    def apply_torch(self, hidden_states: Any) -> Any:
        """M applied along the last axis of a torch tensor (..., d_s), in its dtype and device.

        This is the function :class:`~trustlab.safety.transfer.SafetySwitch` puts on a layer.
        """
        check_is_fitted(self, "fit_")
        torch = require("torch", "torch")
        if not torch.is_tensor(hidden_states) or hidden_states.shape[-1] != self.source_width_:
            raise InputError.bad(
                "hidden_states",
                f"a torch tensor whose last axis is {self.source_width_} wide",
                hidden_states,
            )
        weights = self._torch_weights(hidden_states.dtype, hidden_states.device, torch)
        linear = torch.nn.functional.linear
        if self.kind == "affine":
            return linear(hidden_states, *weights)
        w1, b1, w2, b2 = weights
        return linear(torch.relu(linear(hidden_states, w1, b1)), w2, b2)

    # ------------------------------------------------------------------------------- storage

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``activation_map.safetensors`` (the weights) and ``activation_map.json``
        (settings, widths, metadata, history, fit; no pickle) into ``directory``; return it.

        :func:`load_activation_map` reads it back.
        """
        check_is_fitted(self, "fit_")
        if not isinstance(directory, (str, os.PathLike)):
            raise InputError.bad("directory", "a folder path", directory)
        out = output_dir(directory, "directory")
        safetensors = require("safetensors.numpy", "llm")
        arrays = {n: np.ascontiguousarray(getattr(self, n + "_")) for n in WEIGHT_NAMES[self.kind]}
        params = storable_params(self)
        info = {
            "format_version": FORMAT_VERSION,
            "params": params,
            "source_width": self.source_width_,
            "target_width": self.target_width_,
            "metadata": {
                name: getattr(self, name + "_")
                for name in ("source_model", "target_model", "source_layer", "target_layer")
            },
            "history": self.history_,
            "fit": self.fit_.to_dict(),
        }
        # whole or absent (replace_saved): stopped in the weights' write, the earlier map stays
        # whole; later, the folder holds no JSON, so nothing loads (never the new weights under
        # the old fit and layers)
        replace_saved(
            out,
            {WEIGHTS_FILE: lambda tmp: safetensors.save_file(arrays, str(tmp))},
            {PARAMS_FILE: json_text(info)},
        )
        return out

    # ------------------------------------------------------------------------------- helpers

    def _settings(self) -> _Settings:
        kind = check_choice(self.kind, "kind", KINDS)
        hidden = None if self.hidden is None else check_positive_int(self.hidden, "hidden")
        return _Settings(
            kind,
            hidden,
            None if self.max_epochs is None else check_positive_int(self.max_epochs, "max_epochs"),
            check_positive(self.learning_rate, "learning_rate"),
            check_positive_int(self.batch_size, "batch_size"),
            check_in_range(
                self.validation_fraction, "validation_fraction", 0.0, 1.0, high_open=True
            ),
            check_positive_int(self.patience, "patience"),
            check_random_state(self.random_state),
            check_choice(self.solver, "solver", SOLVERS),
        )

    def _check_source(self, source: Any, name: str) -> np.ndarray:
        check_is_fitted(self, "fit_")
        S = as_float_array(source, name, ndim=2)
        if S.shape[1] != self.source_width_:
            raise InputError.bad(
                name, f"rows of width {self.source_width_} (the map's source width)", S
            )
        return S

    def _apply(self, S: np.ndarray) -> np.ndarray:
        """M on float64 rows, in float64."""
        if self.kind == "affine":
            return S @ self.coef_.T + self.intercept_
        w1, b1, w2, b2 = (
            getattr(self, n + "_").astype(np.float64) for n in WEIGHT_NAMES["autoencoder"]
        )
        return np.maximum(S @ w1.T + b1, 0.0) @ w2.T + b2

    def _torch_weights(self, dtype: Any, device: Any, torch: Any) -> tuple:
        """The weights as torch tensors of ``dtype`` on ``device`` (made once per pair)."""
        key = (dtype, str(device))
        cache = self.__dict__.setdefault("_torch_cache", {})
        if key not in cache:
            # ordinary tensors even when called under inference_mode (generation): they may
            # later meet autograd
            with torch.inference_mode(False):
                cache[key] = tuple(
                    torch.as_tensor(getattr(self, n + "_")).to(dtype=dtype, device=device)
                    for n in WEIGHT_NAMES[self.kind]
                )
        return cache[key]


def load_activation_map(directory: str | os.PathLike) -> ActivationMap:
    """Read a map written by :meth:`ActivationMap.save` from its folder."""
    if not isinstance(directory, (str, os.PathLike)):
        raise InputError.bad("directory", "a folder path", directory)
    folder = Path(directory)
    info = read_saved_params(
        folder, PARAMS_FILE, WEIGHTS_FILE, "ActivationMap.save", FORMAT_VERSION,
        keys=("source_width", "target_width", "metadata", "history", "fit"),
    )  # fmt: skip
    weights_path = folder / WEIGHTS_FILE
    try:
        activation_map = ActivationMap(**info["params"])
    except TypeError as exc:  # a setting this ActivationMap does not have
        raise ResourceError(f"{folder / PARAMS_FILE}: {exc}") from exc
    kind = check_choice(activation_map.kind, "kind", KINDS)
    arrays = read_saved_safetensors(weights_path)
    if set(arrays) != set(WEIGHT_NAMES[kind]):
        raise ResourceError(
            f"{weights_path}: expected the arrays {WEIGHT_NAMES[kind]} of a {kind} map, got "
            f"{sorted(arrays)}"
        )
    d_s, d_t = int(info["source_width"]), int(info["target_width"])
    _check_saved_weights(weights_path, kind, arrays, d_s, d_t)
    for name, value in arrays.items():
        setattr(activation_map, name + "_", value)
    activation_map.source_width_, activation_map.target_width_ = d_s, d_t
    for name, value in info["metadata"].items():
        setattr(activation_map, name + "_", value)
    activation_map.history_ = [_renamed_keys(h) for h in info["history"]]
    activation_map.fit_ = MapFit.from_dict(info["fit"], info["history"])
    activation_map._torch_cache = {}
    return activation_map


def _check_saved_weights(path: Path, kind: str, arrays: dict, d_s: int, d_t: int) -> None:
    """Refuse weights whose shapes disagree with the recorded widths, or that hold a NaN or inf
    (a map loaded from such a file failed at transform with a bare numpy ValueError, or
    mapped every row to NaN)."""
    if kind == "affine":
        shapes = {"coef": (d_t, d_s), "intercept": (d_t,)}
    else:
        h = arrays["weight1"].shape[0] if arrays["weight1"].ndim == 2 else -1
        shapes = {"weight1": (h, d_s), "bias1": (h,), "weight2": (d_t, h), "bias2": (d_t,)}
    for name, value in arrays.items():
        if value.shape != shapes[name] or value.dtype.kind != "f":
            raise ResourceError(
                f"{path}: {name} has shape {value.shape} ({value.dtype}), expected floats of "
                f"shape {shapes[name]} (source width {d_s}, target width {d_t})"
            )
        if not np.isfinite(value).all():
            raise ResourceError(f"{path}: {name} holds NaN or infinite values")


# ============================================================================== paired data


def paired_activations(
    source_model: Any,
    target_model: Any,
    texts: Any,
    source_layer: int,
    target_layer: int,
    *,
    batch_size: int = 8,
    align: str = "tokens",
) -> tuple[np.ndarray, np.ndarray]:
    """Activations of the same texts in two models, one row per paired token in both.

    Each text is tokenized by each model as plain text with the tokenizer's special tokens (no
    chat template; never padding). A paired token gives one row: the output of decoder layer
    ``source_layer`` of the source model and of ``target_layer`` of the target model.

    Parameters
    ----------
    source_model, target_model : trustlab.llm.LocalModel
        May be the same model (one forward pass then reads both layers).
    texts : sequence of str
    source_layer, target_layer : int
        0-based decoder layers of each model.
    batch_size : int, default 8
    align : {"tokens", "offsets"}, default "tokens"
        How tokens are paired. ``"tokens"``: the models must share their tokenizer (each text
        gives the same token ids in both) and every token is a pair. ``"offsets"``: for
        different tokenizers (fast ones); a target token is paired with the source token whose
        character span ends at the same character of the text, and tokens without such an exact
        boundary match are dropped, as are special tokens without a span; when several tokens of
        one tokenizer end at the same character, the last of them counts (see
        :mod:`trustlab.safety.transfer._alignment`).

    Returns
    -------
    source_acts : ndarray (n_pairs, d_s), float32
    target_acts : ndarray (n_pairs, d_t), float32
        Rows in the order of the texts, then of their tokens.

    Examples
    --------
    >>> small = load_model("smollm2-135m-instruct")  # doctest: +SKIP
    >>> s, t = paired_activations(small, other, texts, 9, 6, align="offsets")  # doctest: +SKIP
    """
    texts = check_string_list(texts, "texts", what="texts")
    check_language_model(source_model, "source_model")
    check_language_model(target_model, "target_model")
    s_layer = check_model_layer(source_model, source_layer, "source_layer")
    t_layer = check_model_layer(target_model, target_layer, "target_layer")
    batch_size = check_positive_int(batch_size, "batch_size")
    align = check_choice(align, "align", ALIGNMENTS)
    if align == "offsets":
        pairs = _offset_pairs(source_model, target_model, texts)
    elif source_model is not target_model:
        _check_same_tokens(source_model, target_model, texts)
    if source_model is target_model:
        both = source_model.activations(texts, [s_layer, t_layer], "all", batch_size=batch_size)
        source_rows = [a[:, 0] for a in both]
        target_rows = [a[:, 1] for a in both]
    else:
        source_rows = source_model.activations(texts, s_layer, "all", batch_size=batch_size)
        target_rows = target_model.activations(texts, t_layer, "all", batch_size=batch_size)
    if align == "offsets":
        source_rows = [rows[s] for rows, (s, _) in zip(source_rows, pairs, strict=True)]
        target_rows = [rows[t] for rows, (_, t) in zip(target_rows, pairs, strict=True)]
    return np.concatenate(source_rows), np.concatenate(target_rows)


def check_language_model(model: Any, name: str) -> None:
    """``model`` must look like a :class:`trustlab.llm.LocalModel` (activations and hooks)."""
    needed = ("name", "n_layers", "hidden_size", "tokenizer", "activations", "intervene")
    if any(not hasattr(model, attr) for attr in needed):
        raise InputError.bad(
            name, "a trustlab.llm.LocalModel (from trustlab.llm.load_model)", model
        )


def check_model_layer(model: Any, layer: Any, name: str) -> int:
    """A 0-based decoder layer of ``model``, as an int."""
    n = int(model.n_layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n:
        raise InputError.bad(
            name, f"a decoder layer of {model.name!r}: an integer in [0, {n - 1}]", layer
        )
    return int(layer)


def check_map_model(
    activation_map: ActivationMap, model: Any, side: str, argument: str | None = None
) -> None:
    """The map must come from (``side="source"``) or go to (``"target"``) ``model``: its width,
    and its name where the map records one. ``argument`` names the model's argument in the error
    (default ``"<side>_model"``)."""
    argument = argument or f"{side}_model"
    recorded = getattr(activation_map, f"{side}_model_", None)
    if recorded is not None and recorded != model.name:
        raise InputError.bad(
            argument,
            f"the model the map was fitted {'from' if side == 'source' else 'to'}, {recorded!r}",
            model.name,
        )
    width = getattr(activation_map, f"{side}_width_")
    if int(model.hidden_size) != width:
        raise InputError.bad(
            "activation_map",
            f"a map {'from' if side == 'source' else 'to'} width {model.hidden_size}, the "
            f"hidden size of {argument} {model.name!r}",
            f"a map from width {activation_map.source_width_} to width "
            f"{activation_map.target_width_}",
        )


def map_layer(
    activation_map: ActivationMap, model: Any, layer: Any, side: str, argument: str | None = None
) -> int:
    """The layer given, or the one the map records for ``side``; a layer given must equal the
    recorded one. ``argument`` names the layer's argument in errors (default ``"<side>_layer"``)."""
    name = argument or f"{side}_layer"
    recorded = getattr(activation_map, f"{side}_layer_", None)
    if layer is None:
        if recorded is None:
            raise InputError.bad(
                name, f"a decoder layer of {model.name!r} (the map records none)", layer
            )
        layer = recorded
    layer = check_model_layer(model, layer, name)
    if recorded is not None and recorded != layer:
        raise InputError.bad(name, f"layer {recorded}, where the map was fitted", layer)
    return layer


def _offset_pairs(
    source_model: Any, target_model: Any, texts: list[str]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text, the (source, target) token indices whose spans end at the same character; at
    least one pair in all, or an InputError naming ``texts``."""
    pairs = [
        boundary_pairs(
            token_ends(source_model, text, "source_model"),
            token_ends(target_model, text, "target_model"),
        )
        for text in texts
    ]
    if not any(len(s) for s, _ in pairs):
        raise InputError.bad(
            "texts", "texts where the two tokenizers share at least one token end", texts
        )
    return pairs


def _check_same_tokens(
    source_model: Any,
    target_model: Any,
    texts: list[str],
    names: tuple[str, str] = ("source_model", "target_model"),
) -> None:
    """Each text must give the same token ids in both models; ``names`` are the models'
    arguments in the error (other than the default: backdoor_transfer_study's own texts, which
    it pairs by tokens, with no ``align`` to offer)."""
    own = names == ("source_model", "target_model")
    advice = (
        "Pairing activations across tokenizers needs an alignment by character offsets (pair "
        "tokens whose spans end at the same character): pass align='offsets' to "
        "paired_activations."
        if own
        else "The study pairs the two models' activations token by token: give two models "
        "of one tokenizer."
    )
    for i, text in enumerate(texts):
        ids = [
            m.tokenizer(text, add_special_tokens=True)["input_ids"]
            for m in (source_model, target_model)
        ]
        if list(ids[0]) != list(ids[1]):
            raise InputError(
                f"{names[1]}: expected a model with the tokenizer of {names[0]} "
                f"{source_model.name!r} (the same token ids for every text), got "
                f"{target_model.name!r}, which tokenizes "
                f"{'texts[' + str(i) + ']' if own else repr(text)} differently "
                f"({len(ids[0])} vs {len(ids[1])} tokens). {advice}",
                argument=names[1],
            )


# ============================================================================== vectors


def transfer_vector(
    activation_map: ActivationMap, positive_source_acts: Any, negative_source_acts: Any
) -> np.ndarray:
    """A difference-in-means steering vector carried to the target model through ``activation_map``.

    ``v_t = mean M(positive) - mean M(negative)``: the source activations are mapped, then
    averaged (for an affine map this equals ``A (mean positive - mean negative)``).

    Parameters
    ----------
    activation_map : ActivationMap
        Fitted.
    positive_source_acts, negative_source_acts : array-like (n, d_s)
        Source-model activations of the two sides (for example harmful and harmless prompts at
        their last token), at the map's source layer.

    Returns
    -------
    ndarray (d_t,), float64
    """
    if not isinstance(activation_map, ActivationMap) or not hasattr(activation_map, "fit_"):
        raise InputError.bad("activation_map", "a fitted ActivationMap", activation_map)
    positive = activation_map._check_source(positive_source_acts, "positive_source_acts")
    negative = activation_map._check_source(negative_source_acts, "negative_source_acts")
    return activation_map._apply(positive).mean(axis=0) - activation_map._apply(negative).mean(
        axis=0
    )


def mapped_steering_vector(
    activation_map: ActivationMap,
    source: Any,
    positive: Sequence[str],
    negative: Sequence[str],
    *,
    kind: str = "prompt",
    source_layer: int | None = None,
    target: Any = None,
    target_layer: int | None = None,
    positions: str = "last",
    chat: bool = False,
    batch_size: int = 8,
) -> SteeringVector:
    """A steering vector of the map's target model, built from ``source``'s activations.

    The prompts are read in ``source`` at the map's source layer and mapped before averaging:
    ``v_t = mean M(a(positive)) - mean M(a(negative))`` (the spec's transfer of *activations*;
    for an affine map this is ``A v_s``). With ``positions="mean"`` each prompt's tokens are
    mapped one by one and averaged (token 0 left out, as
    :meth:`~trustlab.llm.LocalModel.activations` does), so a non-linear map sees real activations,
    never an average of them.

    Parameters
    ----------
    activation_map : ActivationMap
        Fitted from ``source`` (its width, and its name where the map records one).
    source : trustlab.llm.LocalModel
    positive, negative : sequence of str
        ``kind="prompt"``: the clean and the triggered prompts, pair by pair (equal lengths).
        ``kind="diff_in_means"``: harmful and harmless prompts (any lengths).
    kind : {"prompt", "diff_in_means"}, default "prompt"
    source_layer : int or None
        The layer read in ``source``; None takes the one the map records (a layer given must
        equal it).
    target : trustlab.llm.LocalModel or None
        The target model, when at hand: its width, name and layer range are checked, and its
        name labels the vector. None labels it with the map's recorded target name.
    target_layer : int or None
        The vector's layer in the target; None takes the one the map records.
    positions : {"last", "mean"}, default "last"
    chat : bool, default False
        Render the prompts with ``source``'s chat template first.
    batch_size : int, default 8

    Returns
    -------
    SteeringVector
        At ``target_layer``, labelled ``"<target> (mapped from <source>)"``.
    """
    if not isinstance(activation_map, ActivationMap) or not hasattr(activation_map, "fit_"):
        raise InputError.bad("activation_map", "a fitted ActivationMap", activation_map)
    check_language_model(source, "source")
    check_map_model(activation_map, source, "source", "source")
    s_layer = map_layer(activation_map, source, source_layer, "source")
    if target is not None:
        check_language_model(target, "target")
        check_map_model(activation_map, target, "target", "target")
        t_layer = map_layer(activation_map, target, target_layer, "target")
        target_name = target.name
    else:
        recorded = activation_map.target_layer_
        t_layer = (
            recorded if target_layer is None else _optional_layer(target_layer, "target_layer")
        )
        if t_layer is None:
            raise InputError.bad(
                "target_layer", "a decoder layer of the target (the map records none)", None
            )
        if recorded is not None and t_layer != recorded:
            raise InputError.bad(
                "target_layer", f"layer {recorded}, where the map was fitted", target_layer
            )
        target_name = activation_map.target_model_ or "target"
    kind = check_choice(kind, "kind", VECTOR_KINDS)
    sides = [
        check_string_list(positive, "positive", what="prompt strings"),
        check_string_list(negative, "negative", what="prompt strings"),
    ]
    if kind == "prompt" and len(sides[1]) != len(sides[0]):
        raise InputError.bad(
            "negative",
            f"{len(sides[0])} prompts, the triggered prompt of each clean one in positive",
            negative,
        )
    positions = check_choice(positions, "positions", POSITIONS)
    chat = check_bool(chat, "chat")
    batch_size = check_positive_int(batch_size, "batch_size")
    vector = _mapped_mean_difference(
        activation_map, source, sides, s_layer, positions, chat, batch_size
    )
    return SteeringVector(
        vector=vector,
        layer=t_layer,
        kind=kind,
        model=f"{target_name} (mapped from {source.name})",
        n_pairs=len(sides[0]) if kind == "prompt" else None,
        n_positive=len(sides[0]),
        n_negative=len(sides[1]),
        positions=positions,
        chat=chat,
    )


def _mapped_mean_difference(
    activation_map: ActivationMap,
    source: Any,
    sides: list[list[str]],
    layer: int,
    positions: str,
    chat: bool,
    batch_size: int,
) -> np.ndarray:
    """``mean M(a(sides[0])) - mean M(a(sides[1]))`` at ``positions`` (checked arguments)."""
    if positions == "last":
        acts = [
            source.activations(prompts, layer, "last", chat=chat, batch_size=batch_size)
            for prompts in sides
        ]
        return transfer_vector(activation_map, *acts)
    means = []
    for prompts in sides:  # each prompt's tokens mapped, then averaged (token 0 left out)
        rows = source.activations(prompts, layer, "all", chat=chat, batch_size=batch_size)
        mapped = [activation_map.transform(r[1:] if len(r) > 1 else r) for r in rows]
        means.append(np.mean([m.astype(np.float64).mean(axis=0) for m in mapped], axis=0))
    return means[0] - means[1]


def random_like(vector: Any, random_state: Any) -> np.ndarray:
    """A random vector with the length of ``vector``: the baseline of every transfer.

    Its direction is uniform on the sphere (a normalised standard normal draw).

    Parameters
    ----------
    vector : array-like (d,)
    random_state : None, int or numpy Generator

    Returns
    -------
    ndarray (d,), float64
        Zero when ``vector`` is zero.
    """
    v = as_float_array(vector, "vector", ndim=1)
    rng = check_random_state(random_state)
    direction = rng.standard_normal(v.shape[0])
    return direction * (np.linalg.norm(v) / np.linalg.norm(direction))


# ============================================================================== fitting


def _model_name(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(getattr(value, "name", None), str):
        return value.name
    raise InputError.bad(name, "a model name, a model with a name, or None", value)


def _optional_layer(value: Any, name: str) -> int | None:
    if value is None:
        return None
    return check_positive_int(value, name, minimum=0)


def _split(n: int, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out row indices (sorted), a random ``fraction`` held out, at least 2
    rows when any (one row has no variance: its FVU was NaN, "held-out FVU nan")."""
    n_held = max(2, round(fraction * n)) if fraction > 0 else 0
    if n - n_held < 1:
        raise InputError.bad("source", f"at least {n_held + 1} rows (validation_fraction)", n)
    order = rng.permutation(n)
    return np.sort(order[n_held:]), np.sort(order[:n_held])


def _fit_affine(S: np.ndarray, T: np.ndarray) -> dict[str, np.ndarray]:
    """Least squares with intercept, on centred rows (the same solution, better conditioned)."""
    s_mean, t_mean = S.mean(axis=0), T.mean(axis=0)
    solution = np.linalg.lstsq(S - s_mean, T - t_mean, rcond=None)[0]  # (d_s, d_t)
    coef = solution.T
    return {"coef": coef, "intercept": t_mean - coef @ s_mean}


def _metrics(target: np.ndarray, predicted: np.ndarray) -> tuple[float, float, float, float]:
    """mse, mean row cosine, fvu and r2 (float64). The sums of squares are taken on the rows
    divided by a power of 2 near their largest magnitude (exact: the same numbers on ordinary
    rows; past ~1e154 the squares overflowed, below ~1e-154 they vanished, and the FVU was NaN)."""
    size = float(power_of_2(max(np.abs(target).max(initial=0), np.abs(predicted).max(initial=0))))
    t, p = target / size, predicted / size
    sse = float(((t - p) ** 2).sum())
    sst = float(((t - t.mean(axis=0)) ** 2).sum())
    fvu = sse / sst if sst > 0 else math.nan
    rows = power_of_2(np.maximum(np.abs(target).max(axis=1), np.abs(predicted).max(axis=1)))
    t, p = target / rows[:, None], predicted / rows[:, None]  # the cosine of each row, likewise
    norms = np.linalg.norm(t, axis=1) * np.linalg.norm(p, axis=1)
    ok = norms > 0
    dots = (t * p).sum(axis=1)
    cosine = float(np.mean(dots[ok] / norms[ok])) if ok.any() else math.nan
    return sse / target.size * size * size, cosine, fvu, 1.0 - fvu


def auto_epochs(n_rows: int, batch_size: int) -> int:
    """The epochs ``max_epochs=None`` allows for ``n_rows`` training rows: about ``AUTO_STEPS``
    Adam steps in whole epochs, clipped to ``AUTO_EPOCHS``."""
    steps_per_epoch = max(1, math.ceil(n_rows / batch_size))
    low, high = AUTO_EPOCHS
    return int(min(high, max(low, math.ceil(AUTO_STEPS / steps_per_epoch))))


def _standardisation(S: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-coordinate source mean and scale; target mean and one common target scale, its
    root-mean-square deviation (both taken on T divided by a power of 2 near its largest
    magnitude, as column_mean_scale does: exact, no overflow at extreme magnitudes)."""
    s_mean, s_scale = column_mean_scale(S)  # no overflow at extreme magnitudes
    size = float(power_of_2(np.abs(T).max(initial=0.0)))
    t_mean = (T / size).mean(axis=0) * size
    t_scale = float(np.sqrt(((T / size - t_mean / size) ** 2).mean())) * size
    return s_mean, s_scale, t_mean, np.float64(t_scale if t_scale > 0 else 1.0)


# the spreads (standard deviations) whose maps the autoencoder's float32 weights hold: its raw-unit
# weights scale as target spread / source spread, and float32 ends at 3.4e38 (normal from 1.2e-38)
FLOAT32_SPREAD = (1e-30, 1e30)


def _check_float32_spread(scale: Any, name: str) -> None:
    """Refuse activations whose spread the autoencoder's float32 weights cannot carry (they
    overflowed to inf or flushed to 0, and the map was NaN or constant)."""
    low, high = FLOAT32_SPREAD
    scale = np.asarray(scale, dtype=np.float64)
    outside = scale[(scale < low) | (scale > high)]
    if outside.size:
        raise InputError(
            f"{name}: expected activations whose standard deviation lies in {low:g}..{high:g} "
            f"for kind='autoencoder' (its weights are float32, in raw units; kind='affine' "
            f"keeps float64), got one of {float(outside[0]):.3g}",
            argument=name,
        )


# how many standard deviations from 0 a column's mean may lie for the autoencoder: its raw-unit
# float32 weights and biases cancel the mean at predict time, with a rounding error of about
# 6e-8 times this ratio in standardised units (the held-out R^2 moved by 3e-3 at 1e6 and by up to
# 0.04 at 3e6-1e7 on tanh maps of seeds 21 and 22; at 1e9 it was -395 against 0.22)
FLOAT32_OFFSET = 1e6


def _check_float32_offset(mean: Any, scale: Any, name: str) -> None:
    """Refuse activations whose mean lies so many standard deviations from 0 that the
    autoencoder's float32 raw-unit map would lose them to rounding."""
    ratio = np.abs(np.asarray(mean, dtype=np.float64)) / np.asarray(scale, dtype=np.float64)
    worst = float(ratio.max(initial=0.0))
    if worst > FLOAT32_OFFSET:
        raise InputError(
            f"{name}: expected activations whose mean lies within {FLOAT32_OFFSET:g} standard "
            f"deviations of 0 for kind='autoencoder' (its float32 weights, in raw units, would "
            f"lose the rest of the map to rounding; kind='affine' keeps float64, or subtract "
            f"the mean first), got a mean {worst:.3g} standard deviations from 0",
            argument=name,
        )


def _squared(x: float) -> float:
    """``x ** 2``, inf past the float range (Python's ``**`` raises OverflowError there)."""
    try:
        return x**2
    except OverflowError:
        return math.inf


def _train_adam(
    S: np.ndarray,
    T: np.ndarray,
    S_watch: np.ndarray,
    T_watch: np.ndarray,
    hidden: int | None,
    settings: _Settings,
) -> tuple[dict[str, np.ndarray], list[dict[str, float]], int, bool]:
    """Adam on standardised rows, for the autoencoder (``hidden`` units) or, with ``hidden``
    None, the affine map; returns the best epoch's weights folded into raw units (float32 for
    the autoencoder, float64 for the affine map), the history, the best epoch and whether
    training stopped early."""
    torch = require("torch", "torch")
    s_mean, s_scale, t_mean, t_scale = _standardisation(S, T)
    if hidden is not None:  # the autoencoder's weights are float32, in raw units
        _check_float32_spread(s_scale, "source")
        _check_float32_spread(t_scale, "target")
        for name, mean in (("source", s_mean), ("target", t_mean)):  # float32 rows, bias2
            if np.abs(mean).max(initial=0.0) > FLOAT32_SPREAD[1]:
                raise InputError(
                    f"{name}: expected activations whose mean lies within "
                    f"+-{FLOAT32_SPREAD[1]:g} for kind='autoencoder' (its weights are float32, "
                    f"in raw units; kind='affine' keeps float64), got one of "
                    f"{float(np.abs(mean).max()):.3g}",
                    argument=name,
                )
        for name, mean, scale in (("source", s_mean, s_scale), ("target", t_mean, t_scale)):
            _check_float32_offset(mean, scale, name)

    def tensor(a: np.ndarray) -> Any:
        return torch.as_tensor(a, dtype=torch.float32)

    X, Y = tensor((S - s_mean) / s_scale), tensor((T - t_mean) / t_scale)
    X_watch, Y_watch = tensor((S_watch - s_mean) / s_scale), tensor((T_watch - t_mean) / t_scale)
    watch_total = float(((Y_watch - Y_watch.mean(dim=0)) ** 2).sum())
    watch_total = watch_total if watch_total > 0 else 1.0  # a constant target: watch the SSE

    generator = torch.Generator().manual_seed(int(settings.rng.integers(2**62)))

    def uniform(shape: tuple[int, ...], fan_in: int) -> Any:
        bound = 1.0 / math.sqrt(fan_in)
        values = (torch.rand(shape, generator=generator) * 2.0 - 1.0) * bound
        return values.requires_grad_(True)

    d_s, d_t = S.shape[1], T.shape[1]
    linear = torch.nn.functional.linear
    if hidden is None:
        params = [uniform((d_t, d_s), d_s), uniform((d_t,), d_s)]

        def forward(x: Any) -> Any:
            return linear(x, *params)

    else:
        params = [uniform((hidden, d_s), d_s), uniform((hidden,), d_s)]
        params += [uniform((d_t, hidden), hidden), uniform((d_t,), hidden)]

        def forward(x: Any) -> Any:
            w1, b1, w2, b2 = params
            return linear(torch.relu(linear(x, w1, b1)), w2, b2)

    n = len(X)
    n_batches = math.ceil(n / settings.batch_size)
    max_epochs = settings.max_epochs  # resolved by fit
    optimizer = torch.optim.Adam(params, lr=settings.learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max_epochs * n_batches)
    history: list[dict[str, float]] = []
    best_fvu, reference, waited = math.inf, math.inf, 0
    best = [p.detach().clone() for p in params]
    best_epoch, stopped = 0, False
    for epoch in range(1, max_epochs + 1):
        order = torch.as_tensor(settings.rng.permutation(n))
        total = 0.0
        for start in range(0, n, settings.batch_size):
            rows = order[start : start + settings.batch_size]
            loss = torch.nn.functional.mse_loss(forward(X[rows]), Y[rows])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            schedule.step()
            total += loss.item() * len(rows)
        with torch.no_grad():
            fvu = float(((Y_watch - forward(X_watch)) ** 2).sum()) / watch_total
        history.append(
            {"epoch": epoch, "train_mse": total / n * _squared(float(t_scale)), "held_out_fvu": fvu}
        )
        if fvu < best_fvu:
            best_fvu, best_epoch = fvu, epoch
            best = [p.detach().clone() for p in params]
        if fvu < reference * (1.0 - IMPROVEMENT):
            reference, waited = fvu, 0
        else:
            waited += 1
        if waited >= settings.patience and epoch < max_epochs:
            stopped = True
            break
    w1, b1, *rest = (p.numpy().astype(np.float64) for p in best)
    # fold the standardisation into the weights, so the stored map takes and gives raw rows:
    # the first layer reads (a - s_mean) / s_scale, the last one writes t_mean + t_scale y
    w1 = w1 / s_scale
    b1 = b1 - w1 @ s_mean
    if hidden is None:
        coef, intercept = w1 * t_scale, b1 * t_scale + t_mean
        return {"coef": coef, "intercept": intercept}, history, best_epoch, stopped
    w2, b2 = rest
    w2, b2 = w2 * t_scale, b2 * t_scale + t_mean
    weights = dict(zip(WEIGHT_NAMES["autoencoder"], (w1, b1, w2, b2), strict=True))
    return {k: v.astype(np.float32) for k, v in weights.items()}, history, best_epoch, stopped
