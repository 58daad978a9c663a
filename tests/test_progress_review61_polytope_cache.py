"""A non-callable ``progress`` is refused before any work (diff review 61 H of a4de949f).

a4de949f checked ``progress`` first in nine functions; four more handed it unchecked to a
WorkCounter, which calls it only after the first unit of work: ``cache_latents(tiny Llama, SAE,
3 texts, progress=5)`` ran the model over all 3 texts and then failed with a bare "TypeError:
'int' object is not callable"; steered_generate, compare_steering and evaluate_polytope did the
same after the first prompt's states or answer. Now trustlab._progress.check_progress refuses it
first, naming the argument (here before the other, unusable arguments are looked at).
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.interpret.sae import cache_latents
from trustlab.safety.polytope import compare_steering, evaluate_polytope, steered_generate

CALLS = {
    "steered_generate": lambda: steered_generate(None, None, ["a"], progress=5),
    "compare_steering": lambda: compare_steering(None, None, ["a"], progress=5),
    "evaluate_polytope": lambda: evaluate_polytope(None, None, None, progress=5),
    "cache_latents": lambda: cache_latents(None, None, ["a"], progress=5),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_non_callable_progress_is_refused_first(name):
    with pytest.raises(InputError) as info:
        CALLS[name]()
    assert str(info.value) == "progress: expected a callable (done, total) or None, got 5"
    assert info.value.argument == "progress"
