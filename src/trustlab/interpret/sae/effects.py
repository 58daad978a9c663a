"""Intervention scoring, steps 4 to 6 (steps 2 and 3, raising a latent and calibrating its
strength, are in ``intervention``).

Step 4: :func:`output_effects` lists, per prompt, the tokens whose next-token probability rose
most; :func:`explain_effects` asks an explainer what the latent promotes (5 samples at
temperature 0.7 by default) and :func:`effects_template` is the model-free baseline (the most
promoted tokens).

Steps 5 and 6: :func:`intervened_generations` samples each prompt's continuation clean and with
the latent raised at the last prompt token and every generated one (the same random stream for
both), and :func:`intervention_score` measures, per explanation, the mean over prompts of the
surprisal of the explanation after the clean passage minus that after the intervened one
(:data:`SHOTS`, then :func:`surprisal_prompt`: worked examples, the passage, and a lead-in
saying the passage holds an amplified amount of the quoted concept;
:func:`explanation_logprobs` reuses the key-value cache of the shared parts). A latent's score
is its best explanation's. The spec's controls are explanations of other latents and latents of
a randomly initialised SAE.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    check_bool,
    check_positive_int,
    check_random_state,
    check_string_list,
)
from trustlab._lazy import require
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.interpret.sae.explain import MARKER, parse_explanation
from trustlab.interpret.sae.intervention import (
    _check_shift,
    _check_strength,
    _check_subject,
    _next_token_logprobs,
    _prompt_ids,
    _raise_last,
)
from trustlab.interpret.sae.model import SparseAutoencoder

__all__ = [
    "OutputEffects",
    "output_effects",
    "effects_prompt",
    "explain_effects",
    "effects_template",
    "intervened_generations",
    "SHOTS",
    "LEAD_IN",
    "surprisal_prompt",
    "explanation_logprobs",
    "InterventionScore",
    "intervention_score",
]


@dataclass(frozen=True)
class OutputEffects(Result):
    """What raising a latent makes the model say: per prompt, the ``top_k`` next tokens whose
    probability rose most (``p_intervened - p_clean`` at the prompt's last token).

    Attributes
    ----------
    latent : int
    strength : float
    prompts : tuple of str
    effects : tuple of tuple of (str, float)
        Per prompt, the tokens (as text) and their probability increase, largest first.
    """

    latent: int
    strength: float
    prompts: tuple[str, ...]
    effects: tuple[tuple[tuple[str, float], ...], ...]

    figure_name = "output_effects.png"

    def top_tokens(self, n: int = 5) -> list[tuple[str, float]]:
        """The ``n`` tokens with the largest increase summed over prompts."""
        totals: dict[str, float] = {}
        for row in self.effects:
            for token, gain in row:
                totals[token] = totals.get(token, 0.0) + gain
        return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[: check_positive_int(n, "n")]

    def summary(self) -> str:
        shown = ", ".join(f"{t!r} (+{g:.3f})" for t, g in self.top_tokens(5))
        return (
            f"latent {self.latent} raised by {self.strength:.4g} over {len(self.prompts)} "
            f"prompts promotes {shown}"
        )

    def plot(self, ax: Any = None) -> Any:
        """The most promoted tokens and their probability increase summed over prompts."""
        ax = new_axes(ax)
        top = self.top_tokens(10)[::-1]
        ax.barh([repr(t) for t, _ in top], [g for _, g in top])
        ax.set_xlabel("probability increase, summed over prompts")
        ax.set_title(f"latent {self.latent} raised by {self.strength:.3g}")
        return ax


def output_effects(
    model: Any,
    sae: SparseAutoencoder,
    latent: int,
    prompts: Sequence[str],
    strength: float,
    *,
    top_k: int = 5,
    layer: int | None = None,
) -> OutputEffects:
    """The spec's step 4 input: per prompt, the ``top_k`` tokens by ``p_intervened - p_clean``
    of the next token at the prompt's last token, latent ``latent`` raised by ``strength``
    there (as in :func:`intervention_kl`, which says which strengths are refused)."""
    layer = _check_subject(model, sae, latent, layer)
    prompts = check_string_list(prompts, "prompts", what="prompt strings")
    strength = _check_shift(sae, latent, _check_strength(strength))
    top_k = check_positive_int(top_k, "top_k")
    torch = require("torch", "torch")
    hook = _raise_last(sae, latent, strength)
    rows = []
    for clean, changed in _next_token_logprobs(model, layer, hook, prompts):
        gain = changed.exp() - clean.exp()
        values, ids = torch.topk(gain, min(top_k, gain.shape[0]))
        rows.append(tuple((model.tokenizer.decode([int(i)]), float(v))
                          for v, i in zip(values, ids, strict=True)))  # fmt: skip
    return OutputEffects(int(latent), strength, tuple(prompts), tuple(rows))


_EFFECT_SHOTS = (
    (
        ("' Paris'", "' France'", "' French'", "' Lyon'", "' Marseille'"),
        ("' France'", "' Paris'", "' Europe'", "' French'", "' Nice'"),
        "France and French places",
    ),
    (
        ("'3'", "'7'", "'2'", "'5'", "'9'"),
        ("' 4'", "' 12'", "' 8'", "' 10'", "' 6'"),
        "numbers written as digits",
    ),
    (
        ("' sad'", "' unhappy'", "' crying'", "' grief'", "' tears'"),
        ("' sorrow'", "' sad'", "' lonely'", "' depressed'", "' miserable'"),
        "sadness",
    ),
)


def effects_prompt(effects: OutputEffects) -> str:
    """The explainer's prompt for intervention scoring: three worked examples, then the
    latent's promoted tokens after each prompt, ending at ``[EXPLANATION]:``."""
    if not isinstance(effects, OutputEffects):
        raise InputError.bad("effects", "OutputEffects (output_effects)", effects)
    lines = [
        "We study a feature inside a language model. When the feature is turned up, the model "
        "becomes more likely to say certain next words. Each numbered line lists the words "
        "whose probability rose most after one text. Say in a few words what the feature makes "
        "the model say.",
        "",
    ]
    for shot, (first, second, answer) in enumerate(_EFFECT_SHOTS, start=1):
        lines += [f"Feature {shot}", f"1. {', '.join(first)}", f"2. {', '.join(second)}",
                  f"{MARKER} {answer}", ""]  # fmt: skip
    lines.append(f"Feature {len(_EFFECT_SHOTS) + 1}")
    for i, row in enumerate(effects.effects, start=1):
        lines.append(f"{i}. " + ", ".join(repr(token) for token, _ in row))
    lines.append(MARKER)
    return "\n".join(lines)


def explain_effects(
    effects: OutputEffects,
    explainer: Any,
    *,
    n_explanations: int = 5,
    temperature: float = 0.7,
    max_new_tokens: int = 20,
    random_state: Any = 0,
) -> tuple[str, ...]:
    """The spec's step 4: ``n_explanations`` explanations of what the latent promotes, sampled
    from ``explainer`` (any model with trustlab's ``generate``) at ``temperature`` on
    :func:`effects_prompt`, each read by :func:`~trustlab.interpret.sae.parse_explanation`
    (empty answers are dropped)."""
    if not hasattr(explainer, "generate"):
        raise InputError.bad("explainer", "a language model with generate", explainer)
    n_explanations = check_positive_int(n_explanations, "n_explanations")
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    prompt = effects_prompt(effects)
    answers = explainer.generate([prompt] * n_explanations, max_new_tokens, chat=True,
                                 temperature=temperature, random_state=random_state)  # fmt: skip
    texts = (parse_explanation(a)[0] for a in answers)
    return tuple(t for t in texts if t)


def effects_template(effects: OutputEffects, n_tokens: int = 5) -> str:
    """A model-free explanation: the ``n_tokens`` most promoted tokens, comma-separated
    (the intervention counterpart of ``template_explanation``)."""
    if not isinstance(effects, OutputEffects):
        raise InputError.bad("effects", "OutputEffects (output_effects)", effects)
    words = []
    for token, _ in effects.top_tokens(n_tokens):
        word = token.strip()
        if word and word not in words:
            words.append(word)
    return ", ".join(words) if words else "nothing in particular"


def intervened_generations(
    model: Any,
    sae: SparseAutoencoder,
    latent: int,
    prompts: Sequence[str],
    strength: float,
    *,
    max_new_tokens: int = 8,
    temperature: float = 1.0,
    layer: int | None = None,
    random_state: Any = 0,
    clean: Sequence[str] | None = None,
) -> tuple[list[str], list[str]]:
    """The spec's step 5: ``(clean, intervened)`` continuations of each prompt, sampled at
    ``temperature``, the intervened ones with the latent raised at the prompt's last token and
    at every generated token.

    Each prompt is sampled from its own stream of ``random_state`` and the clean and
    intervened runs share it (common random numbers), so at strength 0 the two are equal.

    The clean continuations do not depend on the latent: ``clean``, those of an earlier call
    on the same model and prompts with the same ``max_new_tokens``, ``temperature`` and
    ``random_state`` (another latent's), is returned as they are instead of sampled again,
    with the same intervened ones (the stream does not depend on the clean run).
    """
    layer = _check_subject(model, sae, latent, layer)
    prompts = check_string_list(prompts, "prompts", what="prompt strings")
    strength = _check_shift(sae, latent, _check_strength(strength))
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    # each prompt runs alone below, so the model's own check would call every one prompts[0]
    _prompt_ids(model, prompts, require("torch", "torch"))
    given = None if clean is None else _check_clean(clean, len(prompts))
    plain, changed = [], []
    for prompt in prompts:  # one at a time: the hook's "last position" is then the prompt's
        kwargs = {"chat": False, "temperature": temperature, "random_state": seed,
                  "batch_size": 1}  # fmt: skip
        if given is None:
            plain.append(model.completions([prompt], max_new_tokens, **kwargs)[0].text)
        with model.intervene(layer, _raise_last(sae, latent, strength), argument="strength"):
            (raised,) = model.completions([prompt], max_new_tokens, **kwargs)
        changed.append(raised.text)
    return (plain if given is None else given), changed


def _check_clean(clean: Any, n: int) -> list[str]:
    """``n`` clean continuations (strings), one per prompt."""
    if isinstance(clean, str):
        raise InputError.bad("clean", f"a list of {n} strings (one per prompt)", clean)
    try:
        given = list(clean)
    except TypeError:
        raise InputError.bad("clean", f"a list of {n} strings (one per prompt)", clean) from None
    if len(given) != n or not all(isinstance(c, str) for c in given):
        raise InputError.bad("clean", f"a list of {n} strings (one per prompt)", clean)
    return given


#: The lead-in after a passage; the explanation continues it inside the quotes.
LEAD_IN = 'The passage above contains an amplified amount of "'
_PASSAGE_SHOTS = (
    ("The weather today is sunny sunny sunny and warm, sun everywhere", "sunshine"),
    ("She opened the box and found 12, 45, 7 and 390 written inside", "numbers"),
    ("Our trip to Rome, Milan and Venice in Italy, with Italian food", "Italy"),
)
#: The worked examples every passage follows.
SHOTS = "".join(f'Passage: {text}\n{LEAD_IN}{concept}"\n\n' for text, concept in _PASSAGE_SHOTS)


def surprisal_prompt(passage: str) -> str:
    """The part of the scorer's prompt after :data:`SHOTS` for one passage: the passage (its
    whitespace collapsed), then :data:`LEAD_IN`; the explanation is scored as its continuation.
    The scorer reads ``tokens(SHOTS) + tokens(surprisal_prompt(p)) + tokens(explanation)``, each
    tokenized on its own (only the first with the tokenizer's special tokens)."""
    return f"Passage: {' '.join(passage.split())}\n{LEAD_IN}"


def explanation_logprobs(
    scorer: Any, passages: Sequence[str], explanations: Sequence[str], *, batch: bool = True
) -> np.ndarray:
    """``log p(explanation | SHOTS, passage, lead-in)`` summed over the explanation's tokens,
    shape ``(n_explanations, n_passages)``, float64.

    The worked examples are run once and their key-value cache reused for every passage, and
    each passage's cache for all explanations at once: the same numbers as one full forward
    pass per (passage, explanation) (tested), for a fraction of the work. ``batch=False``
    runs each explanation in a batch of its own after the shared passages: bit for bit the
    numbers of one call per explanation (float32 rounding depends on the batch), without
    running the worked examples and passages again for each. Passages of equal token length
    run in one batch where every matrix product keeps at least 4 rows (``_passage_batches``):
    the numbers of one call per passage (bit for bit on the CPU this was measured on, tested
    within float32 rounding, as another BLAS may round a row differently with the row count).
    """
    if not hasattr(scorer, "forward_cached"):
        raise InputError.bad("scorer", "a trustlab.llm.LocalModel", scorer)
    passages = check_string_list(passages, "passages", what="passages")
    explanations = check_string_list(explanations, "explanations", what="explanations")
    batch = check_bool(batch, "batch")
    torch = require("torch", "torch")
    tok = scorer.tokenizer
    targets = [tok(e, add_special_tokens=False)["input_ids"] for e in explanations]
    if any(not t for t in targets):
        raise InputError.bad("explanations", "texts of at least one token", explanations)
    groups = [list(range(len(targets)))] if batch else [[i] for i in range(len(targets))]
    padded = []
    for group in groups:
        width = max(len(targets[i]) for i in group)
        # right padding never read back
        padded.append(torch.tensor([targets[i] + [targets[i][-1]] * (width - len(targets[i]))
                                    for i in group]))  # fmt: skip
    out = np.zeros((len(targets), len(passages)))
    with torch.inference_mode():
        _, shots = scorer.forward_cached(torch.tensor([tok(SHOTS)["input_ids"]]))
        for js, ids in _passage_batches(tok, passages, groups, padded):
            cache = copy.deepcopy(shots)
            if len(js) > 1:
                cache.batch_repeat_interleave(len(js))
            last, after = scorer.forward_cached(torch.tensor(ids), cache)
            last = last[:, -1:]
            for k, (group, ids_g) in enumerate(zip(groups, padded, strict=True)):
                logits = last.repeat_interleave(len(group), dim=0)
                ids_b = ids_g.repeat(len(js), 1)
                if ids_g.shape[1] > 1:  # one-token explanations are read off the last logits
                    # each group extends a copy of the passages' cache (the last group the cache)
                    cache = after if k == len(groups) - 1 else copy.deepcopy(after)
                    cache.batch_repeat_interleave(len(group))
                    rest, _ = scorer.forward_cached(ids_b, cache)
                    logits = torch.cat([logits, rest[:, :-1]], dim=1)
                logp = torch.log_softmax(logits.double(), dim=-1)
                picked = logp.gather(2, ids_b[:, :, None].to(logp.device))[:, :, 0]
                for b, j in enumerate(js):
                    for row, i in enumerate(group):
                        out[i, j] = float(picked[b * len(group) + row, : len(targets[i])].sum())
    return out


def _passage_batches(
    tok: Any, passages: list[str], groups: list[list[int]], padded: list[Any]
) -> list[tuple[list[int], list[list[int]]]]:
    """The passages' token ids (after :data:`SHOTS`) in batches of equal length, each batch
    with its passages' indices. Float32 matrix products give every row the same bits for any
    number of rows from 4 on (fewer rows take other kernels), so passages are batched only
    where every product keeps that regime: passages of at least 4 tokens, and explanation
    groups of at least 4 rows (explanations times tokens; one-token groups run no pass).
    Otherwise each passage is a batch of its own: bit for bit the numbers of one at a time."""
    ids = [tok(surprisal_prompt(p), add_special_tokens=False)["input_ids"] for p in passages]
    batchable = all(len(g) * ids_g.shape[1] >= 4 or ids_g.shape[1] == 1
                    for g, ids_g in zip(groups, padded, strict=True))  # fmt: skip
    batches: dict[Any, list[int]] = {}
    for j, ids_j in enumerate(ids):
        batches.setdefault(len(ids_j) if batchable and len(ids_j) >= 4 else -1 - j, []).append(j)
    return [(js, [ids[j] for j in js]) for js in batches.values()]


@dataclass(frozen=True)
class InterventionScore(Result):
    """Intervention scores of one latent's explanations.

    Attributes
    ----------
    latent : int
    strength : float
        The strength the latent was raised by.
    explanations : tuple of str
    scores : tuple of float
        Per explanation: the mean over prompts of ``surprisal(clean) - surprisal(intervened)``
        of the explanation given the passage (nats the intervention adds to its likelihood).
    sems : tuple of float
        Their standard errors over prompts (NaN with one prompt).
    n_prompts : int
    deltas : ndarray of shape (n_explanations, n_prompts)
        The per-prompt differences; not in ``to_dict()``.
    clean, intervened : tuple of str
        The passages (prompt and generation); not in ``to_dict()``.
    """

    latent: int
    strength: float
    explanations: tuple[str, ...]
    scores: tuple[float, ...]
    sems: tuple[float, ...]
    n_prompts: int
    deltas: np.ndarray = internal_field(default=None)
    clean: tuple[str, ...] = internal_field(default=())
    intervened: tuple[str, ...] = internal_field(default=())

    _dict_extras = ("score", "best_explanation")
    figure_name = "intervention_scores.png"

    @property
    def score(self) -> float:
        """The latent's score: the best of its explanations'."""
        return max(self.scores)

    @property
    def best_explanation(self) -> str:
        return self.explanations[int(np.argmax(self.scores))]

    def summary(self) -> str:
        i = int(np.argmax(self.scores))
        return (
            f"intervention score of latent {self.latent} (strength {self.strength:.4g}): "
            f"{self.scores[i]:.3f} +- {self.sems[i]:.3f} nats for {self.explanations[i]!r}, "
            f"best of {len(self.explanations)} over {self.n_prompts} prompts"
        )

    def plot(self, ax: Any = None) -> Any:
        """Each explanation's score with its standard error."""
        ax = new_axes(ax)
        labels = [e if len(e) <= 40 else e[:37] + "..." for e in self.explanations]
        ax.barh(labels, self.scores, xerr=np.nan_to_num(self.sems))
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_xlabel("surprisal(clean) - surprisal(intervened), nats")
        ax.set_title(f"latent {self.latent}")
        return ax


def intervention_score(
    model: Any,
    sae: SparseAutoencoder,
    latent: int,
    prompts: Sequence[str],
    explanations: str | Sequence[str],
    strength: float,
    *,
    scorer: Any = None,
    max_new_tokens: int = 8,
    temperature: float = 1.0,
    layer: int | None = None,
    random_state: Any = 0,
    generations: tuple[Sequence[str], Sequence[str]] | None = None,
    batch_explanations: bool = True,
) -> InterventionScore:
    """The spec's steps 5 and 6: sample each prompt's continuation clean and with the latent
    raised by ``strength`` (:func:`intervened_generations`), then for every explanation the
    mean over prompts of how many nats less surprising it is after the intervened passage than
    after the clean one (:func:`surprisal_prompt`; the surprisal is ``-log p`` of the
    explanation's tokens, summed).

    Parameters
    ----------
    model : trustlab.llm.LocalModel
        The subject model the SAE reads.
    sae, latent, prompts, strength
        As in :func:`intervention_kl` (``strength`` usually from :func:`calibrate_strength`).
    explanations : str or sequence of str
        What the latent is said to promote (for example from :func:`explain_effects`); the
        latent's score is the best one's.
    scorer : LocalModel, optional
        The model that reads the passages (:func:`explanation_logprobs`); None uses
        ``model``.
    max_new_tokens, temperature, layer, random_state
        Passed to :func:`intervened_generations`.
    generations : (clean, intervened) lists of str, optional
        Continuations :func:`intervened_generations` already sampled for these prompts and
        this strength, to score more explanations on the same passages without sampling
        again; None samples them.
    batch_explanations : bool, default True
        Passed to :func:`explanation_logprobs` as ``batch``: False scores each explanation
        bit for bit as a call with it alone would, the passages still run once.
    """
    explanations = check_string_list([explanations] if isinstance(explanations, str)
                                     else explanations, "explanations", what="explanations")  # fmt: skip
    if any(not e.strip() for e in explanations):
        raise InputError.bad("explanations", "non-empty explanations", explanations)
    batch_explanations = check_bool(batch_explanations, "batch_explanations")
    scorer = model if scorer is None else scorer
    if not hasattr(scorer, "forward_cached"):
        raise InputError.bad("scorer", "a trustlab.llm.LocalModel", scorer)
    if generations is None:
        clean, raised = intervened_generations(
            model, sae, latent, prompts, strength, max_new_tokens=max_new_tokens,
            temperature=temperature, layer=layer, random_state=random_state,
        )  # fmt: skip
    else:  # checked as sampling them would (a latent, prompts and strength they could be of)
        _check_subject(model, sae, latent, layer)
        prompts = check_string_list(prompts, "prompts", what="prompt strings")
        strength = _check_shift(sae, latent, _check_strength(strength))
        clean, raised = _check_generations(generations, len(prompts))
    prompts = list(prompts)
    passages = [p + c for p, c in zip(prompts, clean, strict=True)]
    passages += [p + c for p, c in zip(prompts, raised, strict=True)]
    n, m = len(prompts), len(explanations)
    logp = explanation_logprobs(scorer, passages, explanations, batch=batch_explanations)
    deltas = logp[:, n:] - logp[:, :n]  # surprisal(clean) - surprisal(intervened)
    scores = deltas.mean(axis=1)
    sems = deltas.std(axis=1, ddof=1) / math.sqrt(n) if n > 1 else np.full(m, math.nan)
    return InterventionScore(
        latent=int(latent),
        strength=float(strength),
        explanations=tuple(explanations),
        scores=tuple(float(v) for v in scores),
        sems=tuple(float(v) for v in sems),
        n_prompts=n,
        deltas=deltas,
        clean=tuple(passages[:n]),
        intervened=tuple(passages[n:]),
    )


def _check_generations(generations: Any, n: int) -> tuple[list[str], list[str]]:
    """``(clean, intervened)`` continuations, ``n`` strings each."""
    try:
        clean, raised = generations
        clean, raised = list(clean), list(raised)
    except (TypeError, ValueError):
        raise InputError.bad(
            "generations", "(clean, intervened) continuations", generations
        ) from None
    if len(clean) != n or len(raised) != n or not all(isinstance(g, str) for g in clean + raised):
        raise InputError.bad("generations", f"two lists of {n} strings (one per prompt)",
                             generations)  # fmt: skip
    return clean, raised
