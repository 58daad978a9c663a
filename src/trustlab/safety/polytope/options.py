"""The options of a corrected generation (:func:`~trustlab.safety.steered_generate`,
:func:`~trustlab.safety.compare_steering`, :func:`~trustlab.safety.evaluate_polytope`), each
checked once at the public boundary."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
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
from trustlab.errors import InputError
from trustlab.safety.polytope.language_model import _check_compatible

__all__ = ["CORRECTIONS", "CORRECT_FIRST", "check_correction"]

CORRECTIONS = ("project", "gate", "direction")
#: Steps checked by default: the prompt's last state only (see the module docstring).
CORRECT_FIRST = 1


@dataclass(frozen=True)
class _GenerationOptions:
    """Checked options of a corrected generation (shared by generation and evaluation)."""

    layer: int
    max_new_tokens: int
    correct_first: int
    margin: float
    correction: str
    chat: bool
    direction: Any = None
    strength: float | None = None


def _check_generation(
    polytope: Any,
    model: Any,
    max_new_tokens: Any,
    correct_first: Any,
    margin: Any,
    correction: Any,
    chat: Any,
    direction: Any = None,
    strength: Any = 1.0,
) -> _GenerationOptions:
    """The options of a corrected generation, each checked once."""
    correction, correct_first = check_correction(correction, correct_first)
    if correction != "direction":  # only the direction adds a vector: one given here did nothing
        if direction is not None:
            raise InputError.bad(
                "direction", f"None with correction={correction!r} (only 'direction' uses it)",
                direction,
            )  # fmt: skip
        if strength is not None and not (
            isinstance(strength, numbers.Real) and not isinstance(strength, bool) and strength == 1
        ):
            raise InputError.bad(
                "strength",
                f"the default 1.0 with correction={correction!r} (only 'direction' uses it)",
                strength,
            )
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    margin = check_non_negative(margin, "margin")
    chat = check_bool(chat, "chat")
    layer = _check_compatible(polytope, model)  # before the direction, which reads the model
    if correction == "direction":
        _check_direction(direction, model)
        strength = check_in_range(
            strength, "strength", -math.inf, math.inf, low_open=True, high_open=True
        )
    return _GenerationOptions(
        max_new_tokens=max_new_tokens,
        correct_first=correct_first,
        margin=margin,
        correction=correction,
        chat=chat,
        layer=layer,
        direction=direction if correction == "direction" else None,
        strength=float(strength) if correction == "direction" else None,
    )


def check_correction(correction: Any, correct_first: Any) -> tuple[str, int]:
    """The correction (one of :data:`CORRECTIONS`) and its number of checked steps, checked as
    :func:`steered_generate` checks them; no model needed, so a caller can check them before it
    loads one (the CLI does).

    ``correct_first=0`` is refused: it checks no state, so the "corrected" answers would be the
    plain ones and the share of checked steps corrected 0 of 0 (``safe_flow`` and
    ``benign_perplexity`` refuse it too).

    >>> check_correction("project", 4)
    ('project', 4)
    """
    correction = check_choice(correction, "correction", CORRECTIONS)
    correct_first = check_positive_int(correct_first, "correct_first", minimum=0)
    if correct_first == 0:
        raise InputError.bad(
            "correct_first", "an integer >= 1 (0 checks no state: nothing would be corrected)", 0
        )
    if correction != "project" and correct_first != CORRECT_FIRST:  # it would be ignored
        raise InputError.bad(
            "correct_first",
            f"{CORRECT_FIRST} with correction={correction!r} (the prompt's last state decides; "
            "only 'project' checks later steps)",
            correct_first,
        )
    return correction, correct_first


def _check_direction(direction: Any, model: Any) -> None:
    vector = getattr(direction, "vector", None)
    # read as model.steer reads it: what steer takes passes (an object array of floats, a torch
    # tensor of any float type steer converts), and NaN, inf, text, a bfloat16 tensor or one
    # that requires grad are refused here by name, before the model is used
    try:
        usable = vector is not None
        if usable:
            as_float_array(vector, "direction", shape=(model.hidden_size,))
    except (InputError, RuntimeError):  # RuntimeError: torch's "requires grad" refusal
        usable = False
    if not usable:
        raise InputError.bad(
            "direction",
            f"a RefusalDirection of width {model.hidden_size} (finite numbers) for "
            "correction='direction'",
            direction,
        )
    layer = getattr(direction, "layer", None)  # a bool is no layer (True read as layer 1)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
        raise InputError.bad("direction.layer", f"an integer layer of {model.name}", layer)
    if not 0 <= layer < model.n_layers:
        raise InputError.bad(
            "direction.layer", f"a layer of {model.name} (0..{model.n_layers - 1})", direction
        )
