"""The checks of the generation settings every model shares (local, remote, server and the inspect
provider): a temperature in [0, 2], the number of alternatives per token, a sampling seed. They
follow the OpenAI API where it has a rule; each takes the name to give a bad value. And the size
of a steering shift a local model can take (``LocalModel.steer`` and the transfer measures' hooks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_in_range, check_positive_int
from trustlab.errors import InputError

__all__ = [
    "MAX_TOP_LOGPROBS",
    "STEER_NORM_LIMIT",
    "check_seed",
    "check_steering_scale",
    "check_temperature",
    "check_top_logprobs",
]

# the most a seed drawn from a numpy Generator can be: servers take 32-bit seeds
_SEED_BOUND = 2**31
# the most alternatives per token the OpenAI API returns (chat's top_logprobs)
MAX_TOP_LOGPROBS = 20
# the largest L2 norm a steering shift may have: RMSNorm/LayerNorm sum the squares of the residual
# stream in float32, which overflow at a norm of sqrt(float32 max) = 1.84e19; past it the norm
# layers give zeros and the output head a uniform distribution (measured on SmolLM2)
STEER_NORM_LIMIT = float(np.sqrt(np.finfo(np.float32).max))


def check_temperature(value: Any, name: str = "temperature") -> float:
    """A sampling temperature in [0, 2] (0: greedy decoding), as the OpenAI API allows."""
    return check_in_range(value, name, 0.0, 2.0)


def check_top_logprobs(value: Any, name: str = "top_logprobs") -> int:
    """How many most likely alternatives to report per token: an integer in [0, 20]."""
    count = check_positive_int(value, name, minimum=0)
    if count > MAX_TOP_LOGPROBS:
        raise InputError.bad(name, f"an integer in [0, {MAX_TOP_LOGPROBS}]", value)
    return count


def check_seed(random_state: Any, name: str = "random_state") -> int | None:
    """The integer seed for sampling: None (unseeded), an int >= 0, or one drawn from a Generator.

    A numpy Generator gives one seed for the whole call, so every prompt of a batch (or every
    request of a remote batch) uses the same seed, as an int does.
    """
    if random_state is None:
        return None
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_SEED_BOUND))
    if (
        isinstance(random_state, bool)
        or not isinstance(random_state, (int, np.integer))
        or random_state < 0
    ):
        raise InputError.bad(name, "None, an integer >= 0 or a numpy Generator", random_state)
    return int(random_state)


def check_steering_scale(scale: Any, vector: np.ndarray, name: str = "scale") -> float:
    """``scale`` as a float, such that ``scale * vector`` has an L2 norm below
    :data:`STEER_NORM_LIMIT` (1.84e19): past it a model's float32 norm layers overflow and
    every token gets the same probability (greedy text: empty)."""
    scale = float(as_float_array(scale, name, ndim=0))
    with np.errstate(over="ignore"):
        norm = float(np.linalg.norm(scale * np.asarray(vector, dtype=float)))
    if not norm < STEER_NORM_LIMIT:
        raise InputError(
            f"{name}: expected {name} * vector with an L2 norm below {STEER_NORM_LIMIT:.3g} "
            "(the model's norm layers square the residual stream in float32, which "
            "overflows past it: every token then gets the same probability), got norm "
            f"{norm:.3g} ({name}={scale:g})",
            argument=name,
        )
    return scale
