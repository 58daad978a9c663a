"""The checks of the generation settings every model shares (local, remote, server and the inspect
provider): a temperature in [0, 2], the number of alternatives per token, a sampling seed. They
follow the OpenAI API where it has a rule; each takes the name to give a bad value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab._checks import check_in_range, check_positive_int
from trustlab.errors import InputError

__all__ = ["MAX_TOP_LOGPROBS", "check_seed", "check_temperature", "check_top_logprobs"]

# the most a seed drawn from a numpy Generator can be: servers take 32-bit seeds
_SEED_BOUND = 2**31
# the most alternatives per token the OpenAI API returns (chat's top_logprobs)
MAX_TOP_LOGPROBS = 20


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
