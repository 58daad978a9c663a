"""digits_model's random_state is checked like every other seed (review 58, diffD)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import digits_model

torch = pytest.importorskip("torch")


def _weights(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


@pytest.mark.parametrize("bad", [1.5, True, "3", -1, 2**70])
def test_bad_seeds_are_input_errors_naming_random_state(bad):
    with pytest.raises(InputError, match="random_state"):
        digits_model(hidden=4, random_state=bad)


def test_none_and_generator_are_taken():
    fresh = [_weights(digits_model(hidden=4, random_state=None)) for _ in range(2)]
    assert not torch.equal(fresh[0], fresh[1])  # None: fresh weights each call
    drawn = [_weights(digits_model(hidden=4, random_state=np.random.default_rng(5))) for _ in "ab"]
    assert torch.equal(drawn[0], drawn[1])


def test_int_seed_weights_are_torch_manual_seed_ones():
    model = digits_model(hidden=4, random_state=7)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        expected = torch.nn.Linear(64, 4)
    assert torch.equal(model[0].weight, expected.weight)
    assert torch.equal(model[0].bias, expected.bias)
    assert torch.equal(_weights(model), _weights(digits_model(hidden=4, random_state=np.int64(7))))
