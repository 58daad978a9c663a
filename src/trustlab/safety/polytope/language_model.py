"""The polytope on a language model: reading its hidden states, fitting on prompts, and the check
that a fitted polytope belongs to a model.

Works with a :class:`trustlab.llm.LocalModel`. Layer convention (the runtime's): ``layer=L`` is
the output of decoder layer L, ``output_hidden_states[L + 1]``; the polytope is fitted on
``model.activations(..., layers=L)`` and corrects the output of that same layer through
``model.intervene(L, fn)`` (:mod:`trustlab.safety.polytope.steering`), so reading and steering
happen at one point (the authors read block 19 and steer after block 20).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import check_positive_int, whole_number
from trustlab._progress import Progress, check_progress
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.safety.polytope._rows import batches_in_row_order, live_rows
from trustlab.safety.polytope.results import FacetReport

__all__ = [
    "prompt_activations",
    "fit_on_prompts",
    "PolytopeFit",
    "generation_states",
    "GenerationStates",
]


def prompt_activations(
    model: Any,
    prompts: Sequence[str],
    layer: int | Sequence[int],
    *,
    chat: bool = True,
    batch_size: int = 8,
    progress: Progress | None = None,
) -> np.ndarray:
    """Hidden states (n, hidden) of each prompt's last token at the output of decoder ``layer``
    (a sequence of layers gives (n, n_layers, hidden) from one pass per batch: the input of
    :func:`~trustlab.safety.select_detector`).

    With ``chat=True`` the prompt is wrapped in the model's chat template with the generation
    prompt, so the state is the one from which the answer's first token is predicted, the same
    state :func:`~trustlab.safety.steered_generate` corrects first.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    prompts : str or sequence of str
        One prompt (a string: one row, not one row per character) or several.
    layer : int or sequence of int
        The decoder layer (its output), or several.
    chat : bool, default True
        Wrap each prompt in the chat template.
    batch_size : int, default 8
    progress : callable, optional
        Called after each batch with ``(prompts done, prompts in all)``.

    Returns
    -------
    ndarray (n, hidden) or (n, n_layers, hidden), float64
    """
    texts = _as_prompt_list(prompts)
    layers = _check_layers(layer, model)
    extra = {} if progress is None else {"progress": progress}
    return model.activations(
        texts, layers, "last", chat=chat, batch_size=batch_size, **extra
    ).astype(np.float64)


def _check_layers(layer: Any, model: Any) -> int | list[int]:
    """``layer`` (one or a sequence) as ints, each a layer of ``model``, refused as ``layer``:
    int() read True as 1, 2.7 as 2 and "1" as 1, and a layer past the model was named
    ``layers`` by the model. An integral float (2.0) or a 0-d array still reads as before."""

    def one(given: Any) -> int:
        value = whole_number(given)  # a 0-d numpy array or torch tensor read as its item
        if value is None:
            raise InputError.bad("layer", "an integer layer (or a sequence of them)", layer)
        n_layers = getattr(model, "n_layers", None)
        top = f"{n_layers - 1}" if isinstance(n_layers, (int, np.integer)) else None
        if value < 0 or (top is not None and value >= n_layers):
            name = getattr(model, "name", "the model")
            raise InputError.bad("layer", f"a layer of {name} (0..{top or 'its last'})", value)
        return int(value)

    if np.ndim(layer) == 0:
        return one(layer)
    if isinstance(layer, (str, bytes)) or len(layer) == 0:
        raise InputError.bad("layer", "a layer or a non-empty sequence of layers", layer)
    return [one(v) for v in layer]


def _as_prompt_list(prompts: Any) -> list[str]:
    """One prompt (a string) or a non-empty sequence of them, as a list; ``list(prompt)`` of a
    string would be one prompt per character."""
    try:
        texts = [prompts] if isinstance(prompts, str) else list(prompts)
    except TypeError:  # not iterable (None, a number)
        texts = []
    if not texts or not all(isinstance(p, str) for p in texts):
        raise InputError.bad("prompts", "a string or a non-empty sequence of strings", prompts)
    return texts


@dataclass(frozen=True)
class GenerationStates(Result):
    """The states from which each generated token was predicted, recorded during plain greedy
    generation: ``states[i][t]`` is the newest state at ``layer`` in forward pass t of prompt i
    (t = 0: the prompt's last token; t >= 1: generated token t), the state that
    :func:`~trustlab.safety.steered_generate` checks at step t.

    Attributes
    ----------
    model : str
    layer : int
    prompts, texts : tuple of str
        The prompts and their plain greedy answers.
    states : tuple of ndarray (T_i, hidden)
        One array per prompt (not in ``to_dict()``); T_i = new tokens generated.
    """

    model: str
    layer: int
    prompts: tuple[str, ...]
    texts: tuple[str, ...]
    states: tuple = internal_field()

    _dict_extras = ("n_steps",)

    @property
    def n_steps(self) -> tuple[int, ...]:
        """Recorded steps per prompt."""
        return tuple(len(s) for s in self.states)

    def stacked(self, first: int | None = None) -> np.ndarray:
        """All recorded states, (sum of steps, hidden); ``first``: only each prompt's first
        ``first`` steps."""
        return np.concatenate([s[:first] for s in self.states])

    def summary(self) -> str:
        return (
            f"{sum(self.n_steps)} generation states of {len(self.prompts)} prompts at layer "
            f"{self.layer} of {self.model}"
        )


def generation_states(
    model: Any,
    prompts: Sequence[str],
    layer: int,
    max_new_tokens: int = 16,
    *,
    chat: bool = True,
    batch_size: int = 8,
    progress: Progress | None = None,
) -> GenerationStates:
    """Plain greedy answers with the state at ``layer`` behind every generated token.

    Prompts run in batches of ``batch_size`` as in ``LocalModel.generate`` (left-padded, the
    steps of a row that has finished are not recorded); ``batch_size=1`` generates each prompt
    on its own. A prompt's states are the same function of it in any batch (float32 rounding
    differs with the batch's shape, about 1e-6 of a state's size). The states are read by a
    hook that returns the layer's output unchanged, so the answers are the plain ones. Use them
    to measure how often a detector fires on the steps of benign generations, or to
    :meth:`~SafetyPolytope.calibrate` it.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    prompts : sequence of str
    layer : int
    max_new_tokens : int, default 16
    chat : bool, default True
    batch_size : int, default 8
    progress : callable, optional
        Called after each batch with ``(prompts done, prompts in all)``.

    Returns
    -------
    GenerationStates
    """
    check_progress(progress)
    texts = _as_prompt_list(prompts)
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    layer = check_positive_int(layer, "layer", minimum=0)
    batch_size = check_positive_int(batch_size, "batch_size")
    answers, states = [""] * len(texts), [np.empty(0)] * len(texts)
    done = 0
    with live_rows(model) as rows:
        for batch in batches_in_row_order(model, texts, chat, batch_size):
            seen: list[tuple[np.ndarray, np.ndarray]] = []

            def record(h, seen=seen):
                seen.append((h[:, -1].double().cpu().numpy().copy(), rows.live))
                return h

            rows.start(len(batch))
            with model.intervene(layer, record):
                out = model.generate(
                    [texts[i] for i in batch], max_new_tokens, chat=chat, batch_size=len(batch)
                )
            for r, i in enumerate(batch):
                answers[i] = out[r]
                states[i] = np.array([h[r] for h, live in seen if live[r]])
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
    return GenerationStates(
        model=model.name,
        layer=layer,
        prompts=tuple(texts),
        texts=tuple(answers),
        states=tuple(states),
    )


@dataclass(frozen=True)
class PolytopeFit(Result):
    """What :func:`fit_on_prompts` did: the data, the training accuracy and the facets.

    Attributes
    ----------
    model : str
        The model's name.
    layer : int
        The decoder layer read.
    n_prompts, n_unsafe : int
        Training prompts, and the unsafe ones among them.
    training_accuracy : float
        Share of training prompts the fitted polytope classifies right (unsafe iff flagged).
    facets : FacetReport
        Facets by category on the training prompts.
    """

    model: str
    layer: int
    n_prompts: int
    n_unsafe: int
    training_accuracy: float
    facets: FacetReport

    figure_name = "facets.png"

    def summary(self) -> str:
        return (
            f"safety polytope fitted on {self.n_prompts} prompts ({self.n_unsafe} unsafe) of "
            f"{self.model}, layer {self.layer}; training accuracy {self.training_accuracy:.3f}\n"
            f"{self.facets.summary()}"
        )

    def plot(self, ax=None):
        """The facets' firing rate by category (:meth:`FacetReport.plot`). Returns the Axes."""
        return self.facets.plot(ax=ax)


def fit_on_prompts(
    polytope: Any,
    model: Any,
    prompts: Any,
    *,
    chat: bool = True,
    batch_size: int = 8,
    progress: Progress | None = None,
) -> PolytopeFit:
    """Fit a polytope on a language model's states of labelled prompts.

    Reads each prompt's last state at ``polytope.layer`` (:func:`prompt_activations`) and fits
    the polytope on them with the prompts' unsafe flags and categories. The polytope's settings
    are checked before any state is read.

    Parameters
    ----------
    polytope : SafetyPolytope
        Unfitted, with ``layer`` set; fitted in place.
    model : trustlab.llm.LocalModel
    prompts : SafetyPrompts
        Training prompts of both classes (e.g. ``load_safety_prompts("train")``).
    chat, batch_size, progress
        As in :func:`prompt_activations` (progress counts the prompts read).

    Returns
    -------
    PolytopeFit
    """
    settings, rng = polytope._check_params()
    if polytope.layer is None:
        raise InputError.bad("layer", "the decoder layer to read (SafetyPolytope(layer=L))", None)
    acts = prompt_activations(
        model, prompts.prompts, polytope.layer, chat=chat, batch_size=batch_size, progress=progress
    )
    polytope._fit(acts, prompts.unsafe, prompts.categories, settings, rng)
    unsafe = np.asarray(prompts.unsafe, dtype=bool)
    return PolytopeFit(
        model=model.name,
        layer=int(polytope.layer),
        n_prompts=len(prompts.prompts),
        n_unsafe=int(unsafe.sum()),
        training_accuracy=float((polytope._is_unsafe(acts) == unsafe).mean()),
        facets=polytope.training_report_,
    )


def _check_compatible(polytope: Any, model: Any) -> int:
    """The polytope's layer, once it is known to be fitted and to match the model's width and
    depth (an InputError otherwise)."""
    from trustlab.safety.polytope.estimator import SafetyPolytope

    if not isinstance(polytope, SafetyPolytope):  # scikit-learn: "... is not an estimator"
        raise InputError.bad("polytope", "a fitted SafetyPolytope", polytope)
    check_is_fitted(polytope, "normals_")
    _check_language_model(model)
    if polytope.layer is None:
        raise InputError.bad("polytope.layer", "the layer the polytope was fitted at", None)
    if polytope.n_features_in_ != model.hidden_size:
        raise InputError.bad(
            "model",
            f"a model with hidden size {polytope.n_features_in_} (the polytope's width)",
            f"{model.name} with hidden size {model.hidden_size}",
        )
    layer = polytope.layer  # set by hand or read from a saved polytope.json: True was layer 1
    if isinstance(layer, (bool, np.bool_)) or not isinstance(layer, (int, np.integer)):
        raise InputError.bad("polytope.layer", f"an integer layer of {model.name}", layer)
    if not 0 <= layer < model.n_layers:
        raise InputError.bad(
            "polytope.layer", f"a layer of {model.name} (0..{model.n_layers - 1})", layer
        )
    return int(layer)


def _check_language_model(model: Any) -> None:
    """A language model (a :class:`trustlab.llm.LocalModel` or one with its shape: a positive
    integer ``hidden_size`` and ``n_layers``); None or another object is refused by name."""
    sizes = (getattr(model, "hidden_size", None), getattr(model, "n_layers", None))
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0
               for v in sizes):  # fmt: skip
        raise InputError.bad(
            "model", "a language model (trustlab.llm.LocalModel, e.g. load_model(name))", model
        )
