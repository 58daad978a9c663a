"""Second review of the safety polytope: ``chat`` takes True or False (a text such as "no" was
read as True by generation and the refusal direction)."""

import pytest

from trustlab.errors import InputError
from trustlab.safety import (
    SafetyPolytope,
    benign_perplexity,
    evaluate_polytope,
    load_safety_prompts,
    refusal_direction,
    steered_generate,
)


class _NoModel:
    """A stand-in with a model's shape only: any use beyond the checks fails the test."""

    name, hidden_size, n_layers = "stand-in", 2, 4

    def __getattr__(self, name):
        raise AssertionError(f"the model was used ({name}) before chat was checked")


def _box():
    return SafetyPolytope.from_parameters([[1.0, 0.0]], [1.0], layer=0)


@pytest.mark.parametrize("chat", ["no", "False", 0, None])
def test_chat_must_be_a_bool_in_generation(chat):
    with pytest.raises(InputError, match=r"^chat: expected True or False"):
        steered_generate(_box(), _NoModel(), ["hi"], 4, chat=chat)


def test_chat_must_be_a_bool_in_evaluation_direction_and_perplexity():
    prompts = load_safety_prompts("test", sources=["benign"])
    with pytest.raises(InputError, match=r"^chat: expected True or False"):
        evaluate_polytope(_box(), _NoModel(), prompts, chat="no")
    with pytest.raises(InputError, match=r"^chat: expected True or False"):
        refusal_direction(_NoModel(), prompts, 0, chat="no")
    with pytest.raises(InputError, match=r"^chat: expected True or False"):
        benign_perplexity(_box(), _NoModel(), ["hi"], ["there"], chat="no")
