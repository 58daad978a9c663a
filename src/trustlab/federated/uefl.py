"""UEFL: uncertainty-based extensible-codebook federated learning, independent of any engine.

Zhang, Cao and Liu, "Uncertainty-Based Extensible Codebook for Discrete Federated Learning in
Heterogeneous Data Silos", ICML 2025. Encoder features are vector-quantised against a codebook;
after a first federated iteration, silos whose predictive uncertainty exceeds a threshold get an
extra codebook initialised by k-means on their own features, and training continues.

This module holds the parts every engine shares: the configuration, the uncertainty test
(predictive entropy under Monte Carlo dropout, with dropout really active), the threshold and
the flagging of uncertain silos, k-means codebook initialisation, the weighted average of shared
weights, and one silo's local training and evaluation. The network and its optimiser are in
:mod:`trustlab.federated.model`, the server protocol in :mod:`trustlab.federated.protocol`; the
in-process runner is :func:`trustlab.federated.simulate_uefl` and the Flower apps are in
:mod:`trustlab.federated.flower`.
"""

from __future__ import annotations

import difflib
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_in_range,
    check_non_negative,
    check_positive_int,
)
from trustlab._lazy import require
from trustlab._numerics import seeded_torch
from trustlab._renamed import renamed_keyword
from trustlab._results import Result
from trustlab.errors import InputError
from trustlab.federated._inputs import _round_seed, float32_range_rows
from trustlab.federated._inputs import check_silo_round as _checked
from trustlab.federated.model import (
    Adam,
    _encoder_features,
    build_model,
    codebook_key,
    is_codebook_key,
    load_arrays,
    model_arrays,
)
from trustlab.federated.silos import Silo, _has_distinct_rows

__all__ = [
    "UEFLConfig",
    "SiloPlan",
    "SiloState",
    "SiloUpdate",
    "SiloEvaluation",
    "predictive_entropy",
    "average_weights",
    "uncertainty_threshold",
    "select_uncertain",
    "kmeans_codebook",
    "initial_weights",
    "train_silo",
    "evaluate_silo",
    "mc_dropout_probabilities",
]

WEIGHTINGS = ("uniform", "examples")
SHARINGS = ("local", "shared")
REFERENCES = ("mean", "min")
ENCODERS = ("cnn", "mlp")
CODEWORD_GRADIENTS = ("codebook_loss", "task")
FIRST_BOOK_INITS = ("kmeans", "normal")
# The keys a Flower app's run config holds beside the settings (flower_launch writes them).
_RUN_CONFIG_KEYS = frozenset(
    {"num-silos", "shift", "data", "num-features", "num-classes", "node-timeout", "result-dir"}
)
# Settings renamed since files were first written: old name -> field.
_OLD_FIELD_NAMES = {"lr": "learning_rate", "seed": "random_state"}


@dataclass(frozen=True)
class UEFLConfig(Result):
    """Settings of a UEFL run, shared by every engine (defaults sized for CPU and 8x8 digits).

    Parameters
    ----------
    rounds : int
        Federated rounds of the first iteration (R; the paper uses 20-30).
    rounds_plus : int
        Rounds of each extension iteration (R+; paper 5-10).
    local_epochs : int
        Local epochs per round.
    mc_passes : int
        Stochastic forward passes T of the uncertainty test.
    threshold_factor : float
        ``thd``: a silo is uncertain when its entropy exceeds ``(1 + thd) * reference``. The
        paper uses 0.1, and 0.3 in its unbalanced five-silo setting, which
        :func:`~trustlab.federated.simulate_uefl` picks for its default five rotated silos.
    threshold_reference : {"mean", "min"}
        Reference of the threshold over the silos' first-iteration entropies.
    max_iterations : int
        Cap on iterations, the first included (1 means no extension); the authors have none.
    n_codes, dim, seg, hidden : int
        Codewords per codebook K; encoder channels; segments each position's channels are cut
        into (codeword length ``dim / seg``, the authors' ``seg``); head width.
    dropout, commitment : float
        Dropout of the head (the source of Monte Carlo samples) and the VQ commitment weight.
    learning_rate, batch_size : float, int
        Adam learning rate and minibatch size of local training.
    weighting : {"uniform", "examples"}
        Weights of the server average: 1/S as in the authors' code, or by training examples.
    codebook_sharing : {"local", "shared"}
        "local": every codebook stays on its silo (the authors' code); "shared": book 0 is
        averaged over all silos and each extension over the silos that use it (the paper's text;
        a book just fitted by k-means on each silo is aligned codeword by codeword first).
    codeword_gradient : {"codebook_loss", "task"}
        What moves the codewords in local training. "codebook_loss" (the default): only
        ``||sg(z) - e||^2`` moves them, as in the paper, the authors' code and VQ-VAE.
        "task": the classification loss reaches them as well, so each silo's local codebooks
        become parameters trained for its task (a personalisation that departs from the paper;
        the docs measure both, and in neither mode does the extension beat one local codebook
        trained the same way). Either way the encoder gets the straight-through gradient.
    authors_compat : bool
        Reproduce the authors' evaluation: dropout off, so the T passes coincide and the
        "uncertainty" is the plain softmax entropy.
    encoder : {"cnn", "mlp"}
        CNN for square one-channel images, MLP for any flat features.
    first_book_init : {"kmeans", "normal"}
        Book 0: k-means on each silo's features in round 1 (trustlab's default; a randomly
        initialised book tends to collapse to a few codewords on small models), or standard
        normal draws from the seed, as in the authors' code.
    random_state : int
        Seed of the initial weights, of each round's shuffling and dropout, and of MC passes
        (an integer: the settings travel to Flower nodes as text).
    evaluate_every_round : bool
        Measure every silo after every round (curves); otherwise only when the protocol needs it.
    """

    rounds: int = 8
    rounds_plus: int = 3
    local_epochs: int = 2
    mc_passes: int = 10
    threshold_factor: float = 0.1
    threshold_reference: str = "mean"
    max_iterations: int = 5
    n_codes: int = 16
    dim: int = 16
    seg: int = 4
    hidden: int = 64
    dropout: float = 0.1
    commitment: float = 0.25
    learning_rate: float = 5e-3
    batch_size: int = 32
    weighting: str = "uniform"
    codebook_sharing: str = "local"
    codeword_gradient: str = "codebook_loss"
    authors_compat: bool = False
    encoder: str = "cnn"
    first_book_init: str = "kmeans"
    random_state: int = 0
    evaluate_every_round: bool = True

    def __post_init__(self) -> None:
        for name in ("rounds", "rounds_plus", "local_epochs", "mc_passes", "max_iterations",
                     "n_codes", "dim", "seg", "hidden", "batch_size"):  # fmt: skip
            check_positive_int(getattr(self, name), name)
        if self.dim % self.seg:
            raise InputError.bad("seg", f"a divisor of dim={self.dim}", self.seg)
        check_positive_int(self.random_state, "random_state", minimum=0)
        for name in ("dropout", "commitment", "learning_rate", "threshold_factor"):
            # Numbers, not strings: the settings are written to a Flower run config as they are.
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise InputError.bad(name, "a number", value)
            # 0 and 0.0 are one setting (a checkpoint's fingerprint holds the JSON text).
            object.__setattr__(self, name, float(value))
        check_in_range(self.dropout, "dropout", 0.0, 1.0, high_open=True)
        check_non_negative(self.commitment, "commitment")
        check_non_negative(self.learning_rate, "learning_rate")
        check_in_range(self.threshold_factor, "threshold_factor", -1.0, np.inf, high_open=True)
        check_bool(self.authors_compat, "authors_compat")
        check_bool(self.evaluate_every_round, "evaluate_every_round")
        check_choice(self.threshold_reference, "threshold_reference", REFERENCES)
        check_choice(self.weighting, "weighting", WEIGHTINGS)
        check_choice(self.codebook_sharing, "codebook_sharing", SHARINGS)
        check_choice(self.codeword_gradient, "codeword_gradient", CODEWORD_GRADIENTS)
        check_choice(self.encoder, "encoder", ENCODERS)
        check_choice(self.first_book_init, "first_book_init", FIRST_BOOK_INITS)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> UEFLConfig:
        """Build from a mapping with the field names (``-`` accepted for ``_``); a Flower run
        config can be passed as it is (its ``num-silos``, ``num-features``, ... are skipped).
        ``lr`` and ``seed``, older names of ``learning_rate`` and ``random_state``, still read
        (FutureWarning); any other key is an InputError naming it and the settings."""
        if not isinstance(values, Mapping):
            raise InputError.bad("values", "a mapping of UEFLConfig settings", values)
        names = [f.name for f in fields(cls)]
        picked: dict[str, Any] = {}
        unknown = []
        for key, value in values.items():
            name = str(key).replace("-", "_")
            if name in _OLD_FIELD_NAMES:
                new = _OLD_FIELD_NAMES[name]
                if new in {str(k).replace("-", "_") for k in values}:
                    raise InputError(
                        f"{key}: expected {new} only ({key} is its old name), got both",
                        argument=str(key),
                    )
                warnings.warn(f"{key} is deprecated; use {new}", FutureWarning, stacklevel=2)
                name = new
            if name in names:
                picked[name] = value
            elif key not in _RUN_CONFIG_KEYS:
                unknown.append(str(key))
        if unknown:
            hints = []
            for key in unknown:  # a suggestion spelt as the key is (a run config's dashes)
                pool = names
                if "-" in key and "_" not in key:
                    pool = [n.replace("_", "-") for n in names] + sorted(_RUN_CONFIG_KEYS)
                close = difflib.get_close_matches(key.replace("-", "_") if pool is names else key,
                                                  pool, n=1)  # fmt: skip
                hints.append(repr(key) + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise InputError(
                f"config: expected UEFLConfig settings ({', '.join(names)}; '-' may stand for "
                f"'_'; a Flower run config also holds {', '.join(sorted(_RUN_CONFIG_KEYS))}), "
                f"got unknown key{'s' if len(unknown) > 1 else ''} {', '.join(hints)}",
                argument="config",
            )
        return cls(**picked)

    @renamed_keyword("num_features", "n_features")
    @renamed_keyword("num_classes", "n_classes")
    def model_spec(self, n_features: int, n_classes: int, use_vq: bool = True) -> dict:
        return {
            "num_features": check_positive_int(n_features, "n_features"),
            "num_classes": check_positive_int(n_classes, "n_classes", minimum=2),
            "encoder": self.encoder, "dim": self.dim, "n_codes": self.n_codes,
            "hidden": self.hidden, "dropout": float(self.dropout),
            "commitment": float(self.commitment), "use_vq": bool(use_vq), "seg": self.seg,
            "codeword_gradient": self.codeword_gradient,
        }  # fmt: skip


@dataclass(frozen=True)
class SiloPlan:
    """What the server asks of one silo in one round: its codebook index, whether to create
    that codebook by k-means first, and (for the model) whether the method uses a VQ layer."""

    silo: int
    book_idx: int = 0
    init_ext: bool = False
    use_vq: bool = True


@dataclass
class SiloState:
    """What a silo keeps between rounds: its codebooks (``vq.books.<k>``) and book index."""

    codebooks: dict[str, np.ndarray] = field(default_factory=dict)
    book_idx: int = 0


@dataclass(frozen=True)
class SiloUpdate:
    """A silo's reply after local training: the arrays it shares and its metrics."""

    silo: int
    arrays: dict[str, np.ndarray]
    num_examples: int
    metrics: dict[str, float]


@dataclass(frozen=True)
class SiloEvaluation:
    """A silo's uncertainty test: mean predictive entropy and accuracy on its test data."""

    silo: int
    entropy: float
    accuracy: float
    num_examples: int


def predictive_entropy(probabilities: Any, eps: float = sys.float_info.min) -> np.ndarray:
    """Entropy of the mean prediction over Monte Carlo passes (axis 0), per point.

    ``H = -sum_c pbar_c log(pbar_c + eps)`` with ``pbar`` the mean over axis 0, in nats. The
    ``eps`` guard (the smallest positive double, as in the authors' ``utils.entropy``) makes
    zero probabilities contribute zero.

    Parameters
    ----------
    probabilities : array-like, shape (T, ..., C)
        Softmax outputs of T stochastic passes (each row over C sums to 1).

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> passes = np.array([[[0.9, 0.1]], [[0.5, 0.5]]])   # T = 2 passes, one point
    >>> round(float(predictive_entropy(passes)[0]), 6)
    0.610864
    """
    eps = check_non_negative(eps, "eps")  # -1 or NaN made every entropy NaN without a word
    p = as_float_array(probabilities, "probabilities")
    if p.ndim < 2:
        raise InputError.bad("probabilities", "an array of shape (T, ..., C)", p)
    if (p < 0).any():
        raise InputError.bad("probabilities", "non-negative probabilities", p)
    sums = p.sum(axis=-1)
    if not np.allclose(sums, 1.0, rtol=0, atol=1e-3):
        # Logits or scores would give a wrong (even negative) entropy without a word.
        worst = float(sums.flat[np.argmax(np.abs(sums - 1.0))])
        raise InputError.bad(
            "probabilities", "probabilities over the last axis (summing to 1, e.g. softmax "
            "outputs)", f"a row summing to {worst:g}",
        )  # fmt: skip
    mean = p.mean(axis=0)
    return -np.sum(mean * np.log(mean + eps), axis=-1)


def average_weights(
    updates: Sequence[Mapping[str, Any]],
    weights: Sequence[float] | None = None,
    *,
    keys: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """Weighted average of named arrays, key by key, over the updates that carry each key.

    Weights are renormalised over the updates holding a key, so an extension codebook is
    averaged only over the silos that use it. Sums run in float64 in the given order; a float
    key keeps its input dtype, an integer or boolean one comes back as float64 (its mean need
    not be a whole number; Flower's FedAvg does the same).

    Parameters
    ----------
    updates : sequence of mappings name -> array
    weights : sequence of float, optional
        Non-negative weights (e.g. example counts); equal weights when omitted.
    keys : sequence of str, optional
        Average only these names (default: every name in any update).

    Examples
    --------
    >>> import numpy as np
    >>> avg = average_weights([{"w": np.array([0.0, 2.0])}, {"w": np.array([1.0, 4.0])}], [1, 3])
    >>> avg["w"].tolist()
    [0.75, 3.5]
    """
    if (
        isinstance(updates, (Mapping, str, bytes))
        or not hasattr(updates, "__len__")
        or len(updates) == 0
    ):
        raise InputError.bad("updates", "a non-empty sequence of name -> array mappings", updates)
    for i, update in enumerate(updates):
        if not isinstance(update, Mapping):
            raise InputError.bad(f"updates[{i}]", "a mapping name -> array", update)
    if isinstance(keys, (str, bytes)):  # a string would be read as its characters
        raise InputError.bad("keys", "a sequence of names", keys)
    if weights is None:
        w = np.ones(len(updates))
    else:
        w = as_float_array(weights, "weights", shape=(len(updates),))
        if (w < 0).any() or w.max() <= 0:
            raise InputError.bad("weights", "non-negative weights with a positive sum", w)
        w = w / w.max()  # a sum of huge weights would overflow to inf (and every share to 0)
    names = list(dict.fromkeys(k for u in updates for k in u)) if keys is None else list(keys)
    out = {}
    for name in names:
        holders = [(i, u[name]) for i, u in enumerate(updates) if name in u]
        if not holders:
            raise InputError.bad("keys", "names present in at least one update", name)
        shape = np.shape(holders[0][1])
        total = float(sum(w[i] for i, _ in holders))
        if total <= 0:
            raise InputError.bad("weights", f"a positive weight for a holder of {name!r}", w)
        acc = np.zeros(shape, dtype=np.float64)
        for i, value in holders:
            value = np.asarray(value)
            if value.shape != shape or value.dtype.kind not in "biuf":  # None was NaN
                raise InputError.bad(f"updates[{i}][{name!r}]", f"numbers of shape {shape}", value)
            acc += value.astype(np.float64) * (w[i] / total)
        dtype = np.asarray(holders[0][1]).dtype
        # an integer mean was truncated: [1] and [2] averaged to [1], not 1.5 as Flower's FedAvg
        out[name] = acc.astype(dtype) if dtype.kind == "f" else acc
    return out


def uncertainty_threshold(entropies: Any, factor: float = 0.1, reference: str = "mean") -> float:
    """The threshold ``(1 + factor) * mean(entropies)`` (or ``* min``), fixed after iteration 1.

    Examples
    --------
    >>> round(uncertainty_threshold([0.2, 0.4, 0.9], factor=0.1), 6)
    0.55
    """
    h = as_float_array(entropies, "entropies", ndim=1)
    check_choice(reference, "reference", REFERENCES)
    factor = check_in_range(factor, "factor", -1.0, np.inf, high_open=True)  # NaN, inf refused
    base = h.mean() if reference == "mean" else h.min()
    return float((1.0 + factor) * base)


def select_uncertain(entropies: Any, threshold: float) -> np.ndarray:
    """Boolean mask of the silos whose entropy is strictly above the threshold.

    Examples
    --------
    >>> select_uncertain([0.2, 0.4, 0.9], 0.55).tolist()
    [False, False, True]
    """
    h = as_float_array(entropies, "entropies", ndim=1)
    # A NaN threshold would flag no silo without a word.
    return h > check_in_range(
        threshold, "threshold", -np.inf, np.inf, low_open=True, high_open=True
    )


def kmeans_codebook(features: Any, n_codes: int, random_state: int = 0) -> np.ndarray:
    """k-means centroids of feature vectors, as a codebook (n_codes, dim), float32.

    scikit-learn ``KMeans(n_clusters=n_codes, random_state=random_state, n_init="auto")`` on
    one thread (so the centroids do not depend on the machine's core count). With fewer distinct
    vectors than codewords, the spare codewords repeat existing vectors.

    Examples
    --------
    >>> import numpy as np
    >>> feats = np.r_[np.zeros((5, 2)), np.ones((5, 2))]
    >>> sorted(kmeans_codebook(feats, 2)[:, 0].tolist())
    [0.0, 1.0]
    """
    # -1, 1.5 or "a" was scikit-learn's InvalidParameterError, naming KMeans
    if check_positive_int(random_state, "random_state", minimum=0) > 2**32 - 1:
        raise InputError.bad("random_state", "a seed in [0, 2**32 - 1]", random_state)
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    X = float32_range_rows(features, "features")  # past float32: inf codewords
    n_codes = check_positive_int(n_codes, "n_codes")
    if not _has_distinct_rows(X, n_codes):
        distinct = np.unique(X, axis=0)
        # Too few distinct points for K clusters: keep them all and repeat to fill the book.
        reps = np.resize(np.arange(len(distinct)), n_codes)
        return distinct[reps].astype(np.float32)
    with threadpool_limits(1):
        km = KMeans(n_clusters=n_codes, random_state=random_state, n_init="auto").fit(X)
    return km.cluster_centers_.astype(np.float32)


@renamed_keyword("num_features", "n_features")
@renamed_keyword("num_classes", "n_classes")
def initial_weights(
    config: UEFLConfig, n_features: int, n_classes: int, *, use_vq: bool = True
) -> dict[str, np.ndarray]:
    """The model's starting arrays (all of them, codebook 0 included) from
    ``config.random_state``."""
    spec = config.model_spec(n_features, n_classes, use_vq)
    return model_arrays(build_model(spec, random_state=config.random_state))


_KINDS = (SiloPlan, SiloState, UEFLConfig)  # the classes _checked asks of a silo's round


def _prepare_model(shared, state, silo: Silo, plan: SiloPlan, config: UEFLConfig, n_classes):
    spec = config.model_spec(silo.num_features, n_classes, plan.use_vq)
    model = build_model(spec, random_state=config.random_state)
    if plan.use_vq:
        books = dict(state.codebooks)
        if not books:  # first round: book 0 from the common initialisation
            books[codebook_key(0)] = model_arrays(model, [codebook_key(0)])[codebook_key(0)]
        # In shared mode the server's averaged books replace the local copies.
        books.update({k: v for k, v in shared.items() if is_codebook_key(k)})
        load_arrays(model, books)
    load_arrays(model, {k: v for k, v in shared.items() if not is_codebook_key(k)})
    return model


@renamed_keyword("num_classes", "n_classes")
def train_silo(
    shared: Mapping[str, np.ndarray],
    state: SiloState,
    silo: Silo,
    plan: SiloPlan,
    config: UEFLConfig,
    round_no: int,
    *,
    n_classes: int = 10,
) -> tuple[SiloUpdate, SiloState]:
    """One round of local training on one silo; returns its reply and its new state.

    The silo loads the shared arrays and its own codebooks, creates codebook ``book_idx`` by
    k-means on its encoder features when ``plan.init_ext`` (every spatial position of its
    training set), trains ``local_epochs`` epochs of Adam on cross-entropy + VQ loss, and shares
    every non-codebook array (plus books 0 and ``book_idx`` in "shared" codebook mode).
    Shuffling and dropout are seeded from (seed, round, silo), so every engine gets the same
    result.
    """
    torch = require("torch", "federated")
    silo = _checked(shared, state, silo, plan, config, round_no, n_classes, _KINDS, "train")
    model = _prepare_model(shared, state, silo, plan, config, n_classes)
    book = plan.book_idx if plan.use_vq else 0
    if plan.use_vq:
        key = codebook_key(book)
        if plan.init_ext or key not in model.state_dict():
            codes = kmeans_codebook(_encoder_features(model, silo.X_train), config.n_codes)
            load_arrays(model, {key: codes})
        model.vq.active_book = book
    X = torch.as_tensor(silo.X_train)
    y = torch.as_tensor(silo.y_train)
    optimizer = Adam(model.parameters(), learning_rate=config.learning_rate)
    totals = np.zeros(3)
    steps = 0
    with seeded_torch(_round_seed(config.random_state, round_no, plan.silo)):
        model.train()
        for _ in range(config.local_epochs):
            order = torch.randperm(len(y))
            for start in range(0, len(y), config.batch_size):
                batch = order[start : start + config.batch_size]
                # index_select: the rows X[batch] copies, without the indexing parser
                logits, vq_loss, perplexity = model(X.index_select(0, batch))
                ce = torch.nn.functional.cross_entropy(logits, y.index_select(0, batch))
                optimizer.zero_grad()
                (ce + vq_loss).backward()
                optimizer.step()
                totals += (ce.item(), vq_loss.item(), perplexity.item())
                steps += 1
    arrays = model_arrays(model)
    books = {k: v for k, v in arrays.items() if is_codebook_key(k)}
    if plan.use_vq:  # a silo only ever needs book 0 and its current book
        books = {k: v for k, v in books.items() if k in (codebook_key(0), codebook_key(book))}
    share = {k: v for k, v in arrays.items() if not is_codebook_key(k)}
    if config.codebook_sharing == "shared":
        share.update(books)
    mean = totals / max(steps, 1)
    metrics = {"train-loss": mean[0], "vq-loss": mean[1], "perplexity": mean[2]}
    update = SiloUpdate(plan.silo, share, len(y), {k: float(v) for k, v in metrics.items()})
    return update, SiloState(codebooks=books, book_idx=book)


def mc_dropout_probabilities(model, X, passes: int, *, dropout: bool = True, random_state: int = 0):
    """Softmax outputs of ``passes`` forward passes, shape (passes, n, classes), float64.

    With ``dropout`` the head's dropout layers are switched on for the passes (Monte Carlo
    dropout); without it the module is in eval mode and every pass is the same, which is what
    the authors' ``validate()`` measures. The encoder and VQ layer have no dropout, so they run
    once. Dropout masks come from the seed ``random_state``; torch's global random stream is
    left as it was.
    """
    torch = require("torch", "federated")
    passes = check_positive_int(passes, "passes")  # 0: numpy's 'need at least one array to stack'
    X = torch.as_tensor(np.asarray(X, dtype=np.float32))
    was_training = model.training
    try:
        with torch.no_grad(), seeded_torch(random_state):
            model.eval()
            q, _, _ = model.quantized(X)
            model.head.train(dropout)
            runs = [torch.softmax(model.head(q), dim=1).double().numpy() for _ in range(passes)]
    finally:
        model.train(was_training)
    return np.stack(runs)


@renamed_keyword("num_classes", "n_classes")
def evaluate_silo(
    shared: Mapping[str, np.ndarray],
    state: SiloState,
    silo: Silo,
    plan: SiloPlan,
    config: UEFLConfig,
    round_no: int,
    *,
    n_classes: int = 10,
) -> SiloEvaluation:
    """The uncertainty test of one silo: ``mc_passes`` passes with dropout active (the authors
    evaluate in eval mode, so their passes coincide; ``authors_compat`` reproduces that), the
    mean predictive entropy over the test points, and the accuracy of the deterministic model
    (dropout off)."""
    silo = _checked(shared, state, silo, plan, config, round_no, n_classes, _KINDS, "evaluate")
    model = _prepare_model(shared, state, silo, plan, config, n_classes)
    if plan.use_vq:
        model.vq.active_book = plan.book_idx
    deterministic = mc_dropout_probabilities(model, silo.X_test, 1, dropout=False)[0]
    accuracy = float((deterministic.argmax(1) == silo.y_test).mean())
    probs = mc_dropout_probabilities(
        model, silo.X_test, config.mc_passes, dropout=not config.authors_compat,
        random_state=_round_seed(config.random_state, round_no, plan.silo, purpose=1),
    )  # fmt: skip
    entropy = float(predictive_entropy(probs).mean())
    return SiloEvaluation(plan.silo, entropy, accuracy, len(silo.y_test))
