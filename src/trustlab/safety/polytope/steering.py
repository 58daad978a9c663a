"""Correction during generation: Safe Flow (unsafe states projected into the polytope at its
layer while the model runs), the refusal gate, and steering along the refusal direction.

``correction="project"`` (Safe Flow): at the output of decoder layer ``polytope.layer``, the
newest state of each of the first ``correct_first`` steps (the prompt's last token, then each
generated token) is projected into the polytope when it is flagged (``SafetyPolytope.project``,
target ``c_k <= -margin``); later tokens see the corrected states through the KV cache. The
default ``correct_first=1`` checks only the prompt's last state, the kind of state a polytope
fitted on prompts was trained on: on SmolLM2-135M such a polytope flags most states of benign
*generations* (docs/safety-polytope.md has the table); calibrate it on benign generation states
(``SafetyPolytope.calibrate``) before checking more steps.
``correction="gate"`` (the authors' "backup response"): a prompt whose last state is flagged
gets the fixed text :data:`~trustlab.safety.refusal.REFUSAL_RESPONSE` instead of the model's
answer; other prompts get the plain answer. It is a refusal gate, not a correction of the
model: any keyword judge counts its output as a refusal.
``correction="direction"``: a prompt whose last state is flagged is answered by the model with
``strength * direction.vector`` added at ``direction.layer`` (every position, every step; a
:class:`~trustlab.safety.RefusalDirection`); other prompts get the plain answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from trustlab._checks import (
    check_choice,
    check_non_negative,
    check_positive_int,
)
from trustlab._lazy import require
from trustlab._progress import Progress, WorkCounter, check_progress
from trustlab._results import Result, internal_field
from trustlab.safety.polytope._rows import batches_in_row_order, live_rows
from trustlab.safety.polytope.language_model import (
    _as_prompt_list,
    _check_compatible,
    prompt_activations,
)
from trustlab.safety.polytope.options import (
    CORRECT_FIRST,
    CORRECTIONS,
    _check_generation,
    _GenerationOptions,
    check_correction,
)
from trustlab.safety.refusal import REFUSAL_RESPONSE

__all__ = [
    "safe_flow",
    "SafeFlowStats",
    "steered_generate",
    "SteeredGeneration",
    "compare_steering",
    "SteeringComparison",
    "POSITIONS",
    "CORRECTIONS",
    "CORRECT_FIRST",
    "check_correction",
]

POSITIONS = ("newest", "all")


@dataclass
class SafeFlowStats:
    """Counts gathered while :func:`safe_flow` is active (one entry per corrected forward pass).

    ``checked[t]``, ``flagged[t]``, ``infeasible[t]``: states checked, found unsafe, and left
    unsafe after the correction at forward pass t; ``distance``: L2 lengths of the corrections;
    ``scores``: the detector's score ``max_k c_k`` of every checked state before its correction.
    """

    checked: list[int] = field(default_factory=list)
    flagged: list[int] = field(default_factory=list)
    infeasible: list[int] = field(default_factory=list)
    distance: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)

    @property
    def n_checked(self) -> int:
        return int(sum(self.checked))

    @property
    def n_flagged(self) -> int:
        return int(sum(self.flagged))

    @property
    def n_infeasible(self) -> int:
        return int(sum(self.infeasible))


@contextlib.contextmanager
def safe_flow(
    polytope: Any,
    model: Any,
    *,
    correct_first: int | None = None,
    margin: float = 1e-6,
    positions: str = "newest",
    window: tuple[int, int] | None = None,
    stats: SafeFlowStats | None = None,
) -> Iterator[SafeFlowStats]:
    """Context manager: correct unsafe states at the polytope's layer during forward passes.

    ``positions="newest"``: in each forward pass only the newest position of every row (the one
    that predicts the next token) is checked; the first ``correct_first`` passes are corrected
    (None: all; 0 is refused, it would correct nothing). With a KV cache the first pass is the
    prompt and each later pass one generated token, so this is "the first k generated tokens".
    ``positions="all"``: every position of every pass. ``window=(start, stop)`` instead checks
    positions ``start..stop-1`` of a single teacher-forced pass (prompt and answer together):
    with ``start`` the prompt's last position and ``stop = start + k`` it corrects exactly the
    states that generation would, which is how :func:`~trustlab.safety.benign_perplexity`
    scores an answer under steering. A pass in which no state is flagged returns the layer
    output untouched, so the model is unchanged on safe inputs. "newest" assumes left padding,
    as in ``LocalModel.generate``; other calls that pad on the right (``activations``,
    ``logprobs``) should run one prompt at a time (``batch_size=1``).

    Yields
    ------
    SafeFlowStats
        Filled while the context is active.
    """
    check_choice(positions, "positions", POSITIONS)
    margin = check_non_negative(margin, "margin")
    if correct_first is not None:  # 0 checks no pass: unsafe states would go by unseen
        correct_first = check_correction("project", correct_first)[1]
    layer = _check_compatible(polytope, model)
    with _corrected_states(
        polytope,
        model,
        layer,
        margin,
        correct_first=correct_first,
        positions=positions,
        window=window,
        stats=stats,
    ) as record:
        yield record


@contextlib.contextmanager
def _corrected_states(
    polytope: Any,
    model: Any,
    layer: int,
    margin: float,
    *,
    correct_first: int | None = None,
    positions: str = "newest",
    window: tuple[int, int] | None = None,
    stats: SafeFlowStats | None = None,
) -> Iterator[SafeFlowStats]:
    """:func:`safe_flow` with checked arguments (the hook itself)."""
    torch = require("torch", "torch")
    record = stats if stats is not None else SafeFlowStats()
    calls = [0]

    def correct(h):
        step = calls[0]
        calls[0] += 1
        if correct_first is not None and step >= correct_first:
            return h
        if window is not None:
            cols = slice(window[0], min(window[1], h.shape[1]))
        else:
            cols = slice(h.shape[1] - 1, h.shape[1]) if positions == "newest" else slice(None)
        states = h[:, cols, :]
        flat = states.reshape(-1, states.shape[-1]).double().cpu().numpy()
        scores = polytope._violations(flat).max(axis=1)
        unsafe = scores > 0.0
        record.scores.extend(float(v) for v in scores)
        record.checked.append(len(flat))
        record.flagged.append(int(unsafe.sum()))
        if not unsafe.any():
            record.infeasible.append(0)
            return h
        fixed = _project_as_written(polytope, flat[unsafe], margin, h.dtype, torch)
        record.infeasible.append(int((~fixed.feasible).sum()))
        record.distance.extend(float(v) for v in fixed.distance)
        flat[unsafe] = fixed.points
        new = torch.from_numpy(flat).to(dtype=h.dtype, device=h.device).reshape(states.shape)
        out = h.clone()
        out[:, cols, :] = new
        return out

    with model.intervene(layer, correct):
        yield record


def _project_as_written(polytope: Any, rows: np.ndarray, margin: float, dtype: Any, torch: Any):
    """:meth:`SafetyPolytope._project` of ``rows`` as the model gets them, in its ``dtype``:
    a point a hair inside (``margin`` 1e-6) can round to a flagged one in float32, so a row
    whose rounded point is still flagged is projected again with a margin twice its excess
    (and again, up to 8 times); one still flagged then counts as infeasible."""
    fixed = polytope._project(rows, margin)
    points, feasible = fixed.points.copy(), fixed.feasible.copy()
    extra = np.zeros(len(rows))
    for attempt in range(9):  # the points as written, then up to 8 projections again
        written = torch.from_numpy(points).to(dtype).double().numpy()
        excess = polytope._violations(written).max(axis=1)
        over = (excess > 0.0) & feasible
        if not over.any() or attempt == 8:
            break
        extra[over] = 2.0 * (extra[over] + excess[over])
        for i in np.flatnonzero(over):
            again = polytope._project(rows[i : i + 1], margin + extra[i])
            points[i], feasible[i] = again.points[0], again.feasible[0]
    feasible &= excess <= 0.0
    distance = np.linalg.norm(written - rows, axis=1)
    return SimpleNamespace(points=points, feasible=feasible, distance=distance)


@dataclass(frozen=True)
class SteeredGeneration(Result):
    """Completions generated with a correction of unsafe states.

    Attributes
    ----------
    correction : str
        "project" (Safe Flow), "gate" (fixed refusal for flagged prompts) or "direction"
        (refusal-direction steering of flagged prompts).
    layer, correct_first : int
        Where and for how many steps states were checked (1 for "gate" and "direction", which
        check the prompt's last state).
    margin : float
        The projection's target ``c_k <= -margin``.
    strength : float or None
        "direction": the multiple of the direction added; None otherwise.
    prompts, texts : tuple of str
    flagged_steps : tuple of int
        Per prompt: checked steps at which the newest state was unsafe (and got corrected).
    infeasible_steps : tuple of int
        Per prompt: steps whose state the correction could not bring inside (concept encoder).
    checked_steps : tuple of int
        Per prompt: steps that were checked (at most ``correct_first``).
    step_scores : tuple of ndarray
        "project": per prompt, the detector's score ``max_k c_k`` of each checked state before
        its correction (a step is flagged iff its score is above 0); not in ``to_dict()``.
    """

    correction: str
    layer: int
    correct_first: int
    margin: float
    strength: float | None
    prompts: tuple[str, ...]
    texts: tuple[str, ...]
    flagged_steps: tuple[int, ...]
    infeasible_steps: tuple[int, ...]
    checked_steps: tuple[int, ...]
    step_scores: tuple = internal_field(default=())

    @property
    def steered(self) -> np.ndarray:
        """Prompts whose generation was corrected at least once."""
        return np.array(self.flagged_steps) > 0

    @property
    def steered_step_share(self) -> float:
        """Share of the checked steps that were flagged (and corrected)."""
        checked = sum(self.checked_steps)
        return sum(self.flagged_steps) / checked if checked else float("nan")

    def summary(self) -> str:
        done = f"{int(self.steered.sum())} of {len(self.texts)}"
        if self.correction == "project":
            done += (
                f" generations corrected ({sum(self.flagged_steps)} of "
                f"{sum(self.checked_steps)} checked steps, {sum(self.infeasible_steps)} left "
                "infeasible)"
            )
        else:  # the whole answer of a flagged prompt, not a step
            done += f" prompts flagged ({_ANSWER_FATE[self.correction]})"
        lines = [f"{self.correction} correction at layer {self.layer}: {done}"]
        for prompt, text, k in zip(self.prompts, self.texts, self.flagged_steps, strict=True):
            tag = f"{k} corrected" if self.correction == "project" else "flagged" * bool(k)
            lines.append(f"- {prompt!r} [{tag or 'not flagged'}]: {text!r}")
        return "\n".join(lines)


@dataclass(frozen=True)
class SteeringComparison(Result):
    """Plain and corrected answers to the same prompts, side by side.

    Attributes
    ----------
    plain : tuple of str
        The model's own greedy answers.
    steered : SteeredGeneration
        The corrected answers; its fields stand beside ``plain`` in ``to_dict()``.
    """

    plain: tuple[str, ...]
    steered: SteeredGeneration

    def _dict_items(self) -> dict[str, Any]:
        return {"plain": self.plain, **self.steered._dict_items()}

    def summary(self) -> str:
        lines = []
        steered = self.steered
        for prompt, before, after, k in zip(
            steered.prompts, self.plain, steered.texts, steered.flagged_steps, strict=True
        ):
            lines += [f"prompt: {prompt}", f"  plain:     {before}", f"  corrected: {after}"]
            lines.append(f"  ({_what_was_done(steered.correction, k)})")
        return "\n".join(lines)


def _what_was_done(correction: str, flagged: int) -> str:
    """One prompt's correction in words: "gate" and "direction" replace or steer the whole
    answer of a flagged prompt, they do not correct a number of steps."""
    if correction == "project":
        return f"{flagged} step(s) corrected"
    if not flagged:
        return "not flagged: the plain answer"
    if correction == "gate":
        return "flagged: the fixed refusal text"
    return "flagged: answered with the refusal direction added at every step"


_ANSWER_FATE = {  # what "gate" and "direction" do with a flagged prompt's answer
    "gate": "answer replaced by the fixed refusal",
    "direction": "answered with the refusal direction added",
}


def steered_generate(
    polytope: Any,
    model: Any,
    prompts: str | Sequence[str],
    max_new_tokens: int = 64,
    *,
    correct_first: int = CORRECT_FIRST,
    margin: float = 1e-6,
    chat: bool = True,
    correction: str = "project",
    direction: Any = None,
    strength: float = 1.0,
    batch_size: int = 8,
    progress: Progress | None = None,
) -> SteeredGeneration:
    """Greedy generation from a :class:`trustlab.llm.LocalModel` with unsafe states corrected.

    ``correction="project"`` (Safe Flow): at the output of decoder layer ``polytope.layer``, the
    newest state of each of the first ``correct_first`` steps (the prompt's last token, then each
    generated token) is projected into the polytope (``SafetyPolytope.project``, target
    ``c_k <= -margin``) when it is flagged; later tokens see the corrected states through the KV
    cache. ``correction="gate"`` (the authors' "backup response"): when the state that predicts
    the answer's first token (the prompt's last one) is flagged, the answer is the fixed text
    :data:`~trustlab.safety.refusal.REFUSAL_RESPONSE`; otherwise it is the plain answer.
    ``correction="direction"``: a flagged prompt is answered by the model with
    ``strength * direction.vector`` added at ``direction.layer``; otherwise plainly. Prompts
    run in batches of ``batch_size`` (left-padded as in ``LocalModel.generate``; Safe Flow
    checks and corrects each row's state on its own and counts per prompt, skipping the steps
    of rows that have finished); ``batch_size=1`` generates each prompt on its own. A prompt
    gets the same function of it in any batch (float32 rounding differs with the batch's
    shape, about 1e-6 of a state's size).

    Parameters
    ----------
    polytope : SafetyPolytope
        Fitted, with ``layer`` set.
    model : trustlab.llm.LocalModel
    prompts : str or sequence of str
    max_new_tokens : int, default 64
    correct_first : int, default 1
        "project": steps whose newest state is checked and corrected (1: the prompt's last
        state only; more only with a polytope calibrated on generation states, see
        ``SafetyPolytope.calibrate``).
    margin : float, default 1e-6
        The projection's target ``c_k <= -margin``.
    chat : bool, default True
        Wrap each prompt in the chat template.
    correction : {"project", "gate", "direction"}
    direction : RefusalDirection, optional
        Needed by ``correction="direction"`` (:func:`~trustlab.safety.refusal_direction`);
        refused with the other corrections, which add no vector.
    strength : float, default 1.0
        The multiple of ``direction.vector`` added; another value is refused with the other
        corrections.
    batch_size : int, default 8
        Prompts read and generated together.
    progress : callable, optional
        Called with ``(done, total)`` as the work goes on: one unit per prompt for "project",
        two for "gate" and "direction" (its state, then its answer).

    Returns
    -------
    SteeredGeneration
        Texts and per-prompt counts of corrected and still-infeasible steps.
    """
    check_progress(progress)  # before any work, not when first called
    texts = _as_prompt_list(prompts)
    options = _check_generation(
        polytope,
        model,
        max_new_tokens,
        correct_first,
        margin,
        correction,
        chat,
        direction,
        strength,
    )
    batch_size = check_positive_int(batch_size, "batch_size")
    counter = WorkCounter(progress, _corrected_units(options.correction, len(texts)))
    return _generate_corrected(polytope, model, texts, options, counter, batch_size)


def _corrected_units(correction: str, n_prompts: int) -> int:
    """Progress units of correcting ``n_prompts`` answers (see :func:`steered_generate`)."""
    return n_prompts if correction == "project" else 2 * n_prompts


def compare_steering(
    polytope: Any,
    model: Any,
    prompts: str | Sequence[str],
    max_new_tokens: int = 64,
    *,
    correct_first: int = CORRECT_FIRST,
    margin: float = 1e-6,
    chat: bool = True,
    correction: str = "project",
    direction: Any = None,
    strength: float = 1.0,
    batch_size: int = 8,
    progress: Progress | None = None,
) -> SteeringComparison:
    """The model's plain answers and its corrected ones (:func:`steered_generate`) side by side.

    Parameters are those of :func:`steered_generate`; the plain answers are greedy too, and
    ``progress`` counts them as one unit per prompt after the corrected ones.

    Returns
    -------
    SteeringComparison
    """
    check_progress(progress)  # before any work, not when first called
    n_prompts = len(_as_prompt_list(prompts))
    corrected = _corrected_units(str(correction), n_prompts)
    counter = WorkCounter(progress, corrected + n_prompts)
    steered = steered_generate(
        polytope,
        model,
        prompts,
        max_new_tokens,
        correct_first=correct_first,
        margin=margin,
        chat=chat,
        correction=correction,
        direction=direction,
        strength=strength,
        batch_size=batch_size,
        progress=counter.part(),
    )
    plain = _plain_generate(model, list(steered.prompts), max_new_tokens, chat, counter, batch_size)
    return SteeringComparison(plain=tuple(plain), steered=steered)


def _generate_corrected(
    polytope: Any,
    model: Any,
    texts: list[str],
    options: _GenerationOptions,
    counter: WorkCounter | None = None,
    batch_size: int = 8,
) -> SteeredGeneration:
    """:func:`steered_generate` with checked arguments (``counter`` advances by
    :func:`_corrected_units`)."""
    counter = WorkCounter(None, 0) if counter is None else counter
    if options.correction != "project":
        return _gated_generate(polytope, model, texts, options, counter, batch_size)
    out, stats = [""] * len(texts), [SafeFlowStats() for _ in texts]
    with live_rows(model) as rows:
        for batch in batches_in_row_order(model, texts, options.chat, batch_size):
            rows.start(len(batch))
            hook = _row_corrections(polytope, options, rows, [stats[i] for i in batch])
            chunk, n = [texts[i] for i in batch], options.max_new_tokens
            with model.intervene(options.layer, hook):
                answers = model.generate(chunk, n, chat=options.chat, batch_size=len(batch))
            for r, i in enumerate(batch):
                out[i] = answers[r]
            counter.advance(len(batch))
    return SteeredGeneration(
        correction="project",
        layer=options.layer,
        correct_first=options.correct_first,
        margin=options.margin,
        strength=None,
        prompts=tuple(texts),
        texts=tuple(out),
        flagged_steps=tuple(s.n_flagged for s in stats),
        infeasible_steps=tuple(s.n_infeasible for s in stats),
        checked_steps=tuple(len(s.checked) for s in stats),
        step_scores=tuple(np.array(s.scores) for s in stats),
    )


def _row_corrections(polytope: Any, options: _GenerationOptions, rows: Any, stats: list) -> Any:
    """The Safe Flow hook of one left-padded batch: the newest state of each live row is checked
    and, when flagged, projected on its own (as in a batch of one), with its counts in its own
    :class:`SafeFlowStats`."""
    torch = require("torch", "torch")
    calls = [0]

    def correct(h):
        step = calls[0]
        calls[0] += 1
        if step >= options.correct_first:
            return h
        out = None
        for r in np.flatnonzero(rows.live):
            flat = h[r, -1:, :].double().cpu().numpy()
            score = polytope._violations(flat).max(axis=1)
            record = stats[r]
            record.scores.append(float(score[0]))
            record.checked.append(1)
            record.flagged.append(int(score[0] > 0.0))
            if not score[0] > 0.0:
                record.infeasible.append(0)
                continue
            fixed = _project_as_written(polytope, flat, options.margin, h.dtype, torch)
            record.infeasible.append(int((~fixed.feasible).sum()))
            record.distance.extend(float(v) for v in fixed.distance)
            out = h.clone() if out is None else out
            out[r, -1, :] = torch.from_numpy(fixed.points[0]).to(dtype=h.dtype, device=h.device)
        return h if out is None else out

    return correct


def _gated_generate(
    polytope: Any,
    model: Any,
    texts: list[str],
    options: _GenerationOptions,
    counter: WorkCounter,
    batch_size: int = 8,
) -> SteeredGeneration:
    """ "gate" and "direction": the prompt's last state decides; flagged prompts get the fixed
    refusal ("gate") or a generation along the refusal direction ("direction")."""
    part = counter.part()
    acts = prompt_activations(
        model, texts, options.layer, chat=options.chat, batch_size=batch_size, progress=part
    )
    unsafe = polytope._is_unsafe(acts)
    safe_texts = [t for t, u in zip(texts, unsafe, strict=True) if not u]
    n, chat = options.max_new_tokens, options.chat  # greedy: the same text in any batch
    answers = iter(_plain_generate(model, safe_texts, n, chat, counter, batch_size))
    if options.correction == "gate":
        flagged_answers = iter([REFUSAL_RESPONSE] * int(unsafe.sum()))
        counter.advance(int(unsafe.sum()))
    else:
        direction = options.direction
        with model.steer(direction.vector, direction.layer, options.strength):
            flagged = [t for t, u in zip(texts, unsafe, strict=True) if u]
            flagged_answers = iter(_plain_generate(model, flagged, n, chat, counter, batch_size))
    out = [next(flagged_answers) if u else next(answers) for u in unsafe]
    return SteeredGeneration(
        correction=options.correction,
        layer=options.layer,
        correct_first=1,
        margin=options.margin,
        strength=options.strength,
        prompts=tuple(texts),
        texts=tuple(out),
        flagged_steps=tuple(int(u) for u in unsafe),
        infeasible_steps=(0,) * len(texts),
        checked_steps=(1,) * len(texts),
    )


def _plain_generate(
    model: Any,
    texts: list[str],
    max_new_tokens: int,
    chat: bool,
    counter: WorkCounter,
    batch_size: int = 8,
) -> list[str]:
    """``model.generate`` that moves ``counter`` by one per prompt as its batches finish."""
    if not texts:
        return []
    part = counter.part()
    extra = {} if part is None else {"progress": part}
    return model.generate(texts, max_new_tokens, chat=chat, batch_size=batch_size, **extra)
