"""Diff review 65 K of cbb7525a: benign_perplexity(correct_first=0), the sister of safe_flow's 0,
was taken and corrected nothing, so the plain perplexity passed for a steered one: measured on a
hooked layer with a 3-face polytope (d 8), 3.832 for both 0 and None, 3.569 for 1. Now refused as
safe_flow and steered_generate refuse it, naming correct_first; 1 still corrects."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope, benign_perplexity

torch = pytest.importorskip("torch")

from hooked_models import HookedModel  # noqa: E402


class _Tokenizer:
    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": list(range(len(text.split())))}


class _HookedModel(HookedModel):
    """What benign_perplexity needs: sizes, a tokenizer, ``intervene`` and ``logprobs`` (the
    log-probability falls with the states' size, so a correction moves it)."""

    def __init__(self, states):
        super().__init__(8)
        self.states, self.tokenizer = states, _Tokenizer()

    def logprobs(self, prompts, answers, chat, batch_size):
        h = self.hook(self.states) if self.hook else self.states
        return [-float(h.abs().mean())]


def _polytope_and_model():
    rng = np.random.default_rng(0)
    polytope = SafetyPolytope.from_parameters(
        rng.normal(size=(3, 8)), np.ones(3), mean=np.zeros(8), scale=np.ones(8), layer=1
    )
    states = torch.tensor(rng.normal(size=(1, 6, 8)) * 5, dtype=torch.float32)
    return polytope, _HookedModel(states)


@pytest.mark.parametrize("zero", [0, np.int64(0)])
def test_benign_perplexity_refuses_correct_first_zero(zero):
    polytope, model = _polytope_and_model()
    with pytest.raises(InputError, match="0 checks no state") as info:
        benign_perplexity(polytope, model, ["a b c"], ["x y z"], correct_first=zero, chat=False)
    assert info.value.argument == "correct_first"


def test_benign_perplexity_with_one_step_still_corrects():
    polytope, model = _polytope_and_model()
    plain = benign_perplexity(polytope, model, ["a b c"], ["x y z"], chat=False)
    steered = benign_perplexity(polytope, model, ["a b c"], ["x y z"], correct_first=1, chat=False)
    assert steered < plain  # the prompt's last state was flagged and moved inside
