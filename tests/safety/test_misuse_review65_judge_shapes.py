"""Review 65: ModelJudge reads the first token's alternatives in every shape a model gives them
(as trustlab's other judges do, through llm.completion.logprob_pairs): OpenAI's JSON dicts were
read as their keys and ignored (the text decided: 0.0 instead of 0.75), objects and mappings
raised a raw TypeError / ValueError."""

import math
from types import SimpleNamespace

import pytest

from trustlab.errors import InputError
from trustlab.safety.misuse import ModelJudge

YES, NO = math.log(0.75), math.log(0.25)


class _Model:
    name = "fake"

    def __init__(self, top):
        self.top = top

    def generate(self, prompts, max_new_tokens, chat=True):
        return ["No"]

    def completions(self, prompts, max_new_tokens, chat=True, top_logprobs=None):
        return [SimpleNamespace(text="No", top_logprobs=(self.top,))]


@pytest.mark.parametrize(
    "top",
    [
        (("Yes", YES), (" No", NO)),
        ({"token": "Yes", "logprob": YES}, {"token": " No", "logprob": NO}),
        (SimpleNamespace(token="Yes", logprob=YES), SimpleNamespace(token=" No", logprob=NO)),
        {"Yes": YES, " No": NO},
    ],
    ids=["pairs", "openai-json", "objects", "mapping"],
)
def test_every_shape_gives_the_yes_mass(top):
    assert ModelJudge(_Model(top))(["a", "b"], "objective") == pytest.approx(0.75, abs=1e-12)


def test_unreadable_alternatives_are_an_input_error():
    with pytest.raises(InputError, match="model: expected completions"):
        ModelJudge(_Model(("Yes", "No")))(["a"], "objective")
