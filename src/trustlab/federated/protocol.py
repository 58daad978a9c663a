"""The UEFL server protocol, independent of the engine that carries the messages.

A :class:`ProtocolDriver` owns the global arrays and the protocol state (round, iteration, book
indices, the fixed threshold, the history). Each :meth:`ProtocolDriver.step` runs one federated
round through an engine: the in-process engine below, or the Flower grid in
:mod:`trustlab.federated.flower`. Both see the same plans and the same arrays, and both average
with :func:`trustlab.federated.uefl.average_weights` over the replies sorted by silo, so the two
engines end with the same parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

from trustlab._checks import as_float_array, check_positive_int
from trustlab._renamed import renamed_keyword
from trustlab._results import Result
from trustlab.errors import BackendError, InputError
from trustlab.federated.model import codebook_key, is_codebook_key
from trustlab.federated.silos import Silo
from trustlab.federated.uefl import (
    SiloEvaluation,
    SiloPlan,
    SiloState,
    SiloUpdate,
    UEFLConfig,
    average_weights,
    evaluate_silo,
    select_uncertain,
    train_silo,
    uncertainty_threshold,
)

__all__ = [
    "Assignment",
    "Engine",
    "ProtocolState",
    "ProtocolDriver",
    "InProcessEngine",
    "arrays_for_silo",
    "align_codebook",
]

#: What the server sends one silo in one round: its plan and the arrays it gets.
Assignment = tuple[SiloPlan, dict[str, np.ndarray]]


class Engine(Protocol):
    """Carries one round's assignments to the silos and brings their replies back."""

    def train(self, round_no: int, assignments: Sequence[Assignment]) -> list[SiloUpdate]: ...

    def evaluate(
        self, round_no: int, assignments: Sequence[Assignment]
    ) -> list[SiloEvaluation]: ...


@dataclass
class ProtocolState(Result):
    """Where a UEFL run stands (JSON-safe; the arrays are kept beside it).

    ``to_dict()`` holds every field and :meth:`from_dict` rebuilds the state from it (the
    checkpoint and the Flower result file store it so).
    """

    n_silos: int
    round: int = 0
    iteration: int = 1
    round_in_iteration: int = 0
    book_idx: list[int] = field(default_factory=list)
    init_pending: list[bool] = field(default_factory=list)
    threshold: float | None = None
    finished: bool = False
    history: list[dict[str, Any]] = field(default_factory=list)
    extensions: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # "2" (a hand-edited file) or 2.5 was a raw "can't multiply sequence by non-int", 0 a
        # state of no silos, True one silo, and -1 was blamed on book_idx
        self.n_silos = check_positive_int(self.n_silos, "n_silos")
        self.book_idx = self.book_idx or [0] * self.n_silos
        self.init_pending = self.init_pending or [False] * self.n_silos
        for name in ("book_idx", "init_pending"):  # a shorter list: an IndexError in plans()
            value = getattr(self, name)
            if not isinstance(value, Sequence) or len(value) != self.n_silos:
                raise InputError.bad(name, f"one entry per silo (n_silos={self.n_silos})", value)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ProtocolState:
        """The state that ``to_dict()`` wrote; another mapping is an InputError naming the
        keys it lacks or has too many."""
        names = [f.name for f in fields(cls)]
        if not isinstance(values, Mapping):
            raise InputError.bad("values", "a mapping written by ProtocolState.to_dict()", values)
        unknown = [str(k) for k in values if k not in names]
        if unknown or "n_silos" not in values:
            got = f"unknown keys {unknown}" if unknown else f"no 'n_silos' (keys {list(values)})"
            expected = f"ProtocolState fields ({', '.join(names)})"
            raise InputError(f"values: expected {expected}, got {got}", argument="values")
        return cls(**values)

    def summary(self) -> str:
        status = "finished" if self.finished else "running"
        return (
            f"UEFL protocol ({status}): round {self.round}, iteration {self.iteration}, "
            f"{self.n_silos} silos, book indices {self.book_idx}, threshold {self.threshold}"
        )


def arrays_for_silo(
    global_arrays: dict[str, np.ndarray], plan: SiloPlan, sharing: str
) -> dict[str, np.ndarray]:
    """What the server sends one silo: every shared array, and in "shared" codebook mode the
    averaged book 0 and the silo's extension book (when one exists yet)."""
    out = {k: v for k, v in global_arrays.items() if not is_codebook_key(k)}
    if sharing == "shared" and plan.use_vq:
        for book in {0, plan.book_idx}:
            key = codebook_key(book)
            if key in global_arrays and not (plan.init_ext and book == plan.book_idx):
                out[key] = global_arrays[key]
    return out


class ProtocolDriver:
    """The server side of UEFL (or of a baseline without extension), one round per step.

    Iteration 1 runs ``config.rounds`` rounds with every silo on book 0. Its last evaluation
    fixes the threshold ``(1 + thd) * mean`` (or min) of the silos' entropies. While some silo is
    above it and fewer than ``max_iterations`` iterations ran, the silos above it move to a new
    book (index = iteration - 1), created by k-means on their features in the iteration's first
    round, and ``rounds_plus`` more rounds run.
    """

    def __init__(
        self,
        config: UEFLConfig,
        n_silos: int,
        initial_arrays: dict[str, np.ndarray],
        *,
        use_vq: bool = True,
        state: ProtocolState | None = None,
    ):
        if not isinstance(config, UEFLConfig):  # a dict failed with an AttributeError
            raise InputError.bad("config", "a UEFLConfig", config)
        n_silos = check_positive_int(n_silos, "n_silos")  # 0 or -1 made a driver of no silos
        if state is not None and getattr(state, "n_silos", None) != n_silos:  # an IndexError
            got = state.n_silos if isinstance(state, ProtocolState) else state
            raise InputError.bad("state", f"a ProtocolState of n_silos={n_silos}", got)
        self.config = config
        self.use_vq = use_vq
        if state is None:
            state = ProtocolState(n_silos)
            # Round 1 creates book 0 by k-means on every silo, unless the authors' random
            # initialisation is asked for.
            state.init_pending = [use_vq and config.first_book_init == "kmeans"] * n_silos
        self.state = state
        keep = (lambda k: True) if config.codebook_sharing == "shared" or not use_vq else (
            lambda k: not is_codebook_key(k)
        )  # fmt: skip
        self.arrays = {k: v for k, v in initial_arrays.items() if keep(k)}

    @property
    def finished(self) -> bool:
        return self.state.finished

    def plans(self, for_training: bool = True) -> list[SiloPlan]:
        s = self.state
        return [
            SiloPlan(i, s.book_idx[i], for_training and s.init_pending[i], self.use_vq)
            for i in range(s.n_silos)
        ]

    def assignments(self, for_training: bool = True) -> list[Assignment]:
        """Every silo's plan with the arrays it gets this round."""
        sharing = self.config.codebook_sharing
        return [(p, arrays_for_silo(self.arrays, p, sharing)) for p in self.plans(for_training)]

    def step(self, engine: Engine) -> dict[str, Any]:
        """Run one round (train, average, maybe evaluate and extend); return its record."""
        s, cfg = self.state, self.config
        if s.finished:
            raise BackendError("the protocol has finished; no round is left to run")
        round_no = s.round + 1
        updates = _by_silo(engine.train(round_no, self.assignments()), s.n_silos, "train")
        _check_finite(updates, round_no, cfg.learning_rate)
        if cfg.codebook_sharing == "shared" and self.use_vq:
            _align_new_books(updates, self.plans())
        weights = None if cfg.weighting == "uniform" else [u.num_examples for u in updates]
        self.arrays.update(average_weights([u.arrays for u in updates], weights))
        s.round, s.round_in_iteration = round_no, s.round_in_iteration + 1
        s.init_pending = [False] * s.n_silos
        end = s.round_in_iteration >= (cfg.rounds if s.iteration == 1 else cfg.rounds_plus)
        record: dict[str, Any] = {
            "round": round_no,
            "iteration": s.iteration,
            "book_idx": list(s.book_idx),
            "train": {k: [u.metrics.get(k) for u in updates] for k in updates[0].metrics},
            "entropy": None,
            "accuracy": None,
        }
        if end or cfg.evaluate_every_round:
            replies = engine.evaluate(round_no, self.assignments(False))
            results = _by_silo(replies, s.n_silos, "evaluate")
            record["entropy"] = [r.entropy for r in results]
            record["accuracy"] = [r.accuracy for r in results]
        s.history.append(record)
        if end:
            self._end_iteration(np.asarray(record["entropy"]))
        return record

    def _end_iteration(self, entropies: np.ndarray) -> None:
        s, cfg = self.state, self.config
        if s.threshold is None:
            s.threshold = uncertainty_threshold(
                entropies, cfg.threshold_factor, cfg.threshold_reference
            )
        above = select_uncertain(entropies, s.threshold)
        if not self.use_vq or not above.any() or s.iteration >= cfg.max_iterations:
            s.finished = True
            return
        s.iteration += 1
        s.round_in_iteration = 0
        flagged = [int(i) for i in np.flatnonzero(above)]
        for i in flagged:
            s.book_idx[i] = s.iteration - 1
            s.init_pending[i] = True
        s.extensions.append(
            {"iteration": s.iteration, "after_round": s.round, "flagged": flagged,
             "entropy": [float(h) for h in entropies], "threshold": s.threshold}
        )  # fmt: skip

    def run(
        self,
        engine: Engine,
        on_round: Callable[[ProtocolDriver, dict[str, Any]], None] | None = None,
    ) -> ProtocolState:
        """Step until the protocol finishes; ``on_round(driver, record)`` after every round."""
        while not self.finished:
            record = self.step(engine)
            if on_round is not None:
                on_round(self, record)
        return self.state


def align_codebook(reference: np.ndarray, book: np.ndarray) -> np.ndarray:
    """``book``'s codewords reordered to match ``reference``'s, row by row.

    k-means numbers its clusters arbitrarily, so codeword ``j`` of two silos' books need not be
    the same cluster. The order minimising the summed squared distance between matched
    codewords (Hungarian matching, ``scipy.optimize.linear_sum_assignment``) makes a codeword by
    codeword average meaningful; a permuted copy of ``reference`` comes back as ``reference``.
    """
    from scipy.optimize import linear_sum_assignment

    ref = as_float_array(reference, "reference", ndim=2)
    other = np.asarray(book)
    as_float_array(other, "book", shape=ref.shape)  # a book of other size came back cut short
    cost = ((ref[:, None, :] - other[None, :, :].astype(np.float64)) ** 2).sum(axis=2)
    _, order = linear_sum_assignment(cost)
    return other[order]


def _align_new_books(updates: Sequence[SiloUpdate], plans: Sequence[SiloPlan]) -> None:
    """Align, in place, the books the silos created by k-means this round (book 0 in round 1,
    an extension in its first round) to the lowest such silo's copy before they are averaged.

    Only the order of the codewords changes: the model quantises to the nearest codeword, so a
    silo's book means the same in any order.
    """
    for book in sorted({p.book_idx for p in plans if p.init_ext}):
        key = codebook_key(book)
        holders = [u for u, p in zip(updates, plans, strict=True) if p.init_ext and p.book_idx == book
                   and key in u.arrays]  # fmt: skip
        for u in holders[1:]:
            u.arrays[key] = align_codebook(holders[0].arrays[key], u.arrays[key])


def _check_finite(updates: Sequence[SiloUpdate], round_no: int, learning_rate: float) -> None:
    """Refuse a round whose local training diverged. Averaged, one silo's NaN weights made every
    later number NaN, and the run failed at the next evaluation with 'probabilities: expected
    finite values, got nan', an argument the user never passed."""
    for u in updates:
        bad = [k for k, v in u.arrays.items() if not np.isfinite(v).all()]
        if bad:
            raise InputError(
                f"learning_rate: expected a rate at which local training stays finite, got "
                f"{learning_rate:g} (silo {u.silo}'s weights after round {round_no} hold NaN or "
                f"inf, in {', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''}); lower it, or "
                "scale the features down",
                argument="learning_rate",
            )


def _by_silo(replies: Sequence[Any], n_silos: int, what: str) -> list[Any]:
    """Replies sorted by silo; every silo must answer exactly once."""
    ordered = sorted(replies, key=lambda r: r.silo)
    if [r.silo for r in ordered] != list(range(n_silos)):
        got = [r.silo for r in ordered]
        raise BackendError(
            f"{what}: expected one reply from each of the silos 0..{n_silos - 1}, got {got}"
        )
    return ordered


class InProcessEngine:
    """Runs every silo in this process, keeping each silo's state (its codebooks) here."""

    @renamed_keyword("num_classes", "n_classes")
    def __init__(self, silos: Sequence[Silo], config: UEFLConfig, n_classes: int):
        self.silos = list(silos)
        self.config = config
        self.n_classes = n_classes
        self.states = [SiloState() for _ in self.silos]

    def train(self, round_no: int, assignments: Sequence[Assignment]) -> list[SiloUpdate]:
        """Train every assigned silo one round; keep its new codebooks here."""
        updates = []
        for plan, arrays in assignments:
            update, self.states[plan.silo] = train_silo(
                arrays, self.states[plan.silo], self.silos[plan.silo], plan, self.config,
                round_no, n_classes=self.n_classes,
            )  # fmt: skip
            updates.append(update)
        return updates

    def evaluate(self, round_no: int, assignments: Sequence[Assignment]) -> list[SiloEvaluation]:
        """The uncertainty test of every assigned silo."""
        return [
            evaluate_silo(arrays, self.states[plan.silo], self.silos[plan.silo], plan,
                          self.config, round_no, n_classes=self.n_classes)
            for plan, arrays in assignments
        ]  # fmt: skip
