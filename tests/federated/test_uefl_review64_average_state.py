"""Review 64: average_weights refuses arrays that are not numbers (None averaged to NaN without a
word, strings were a raw ValueError), and ProtocolDriver a state of another silo count (it
planned rounds for the state's silos and the engine failed with a raw IndexError)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import ProtocolDriver, ProtocolState, UEFLConfig, average_weights


@pytest.mark.parametrize("bad", [None, np.array([None]), np.array(["a"]), "a"])
def test_average_weights_refuses_values_that_are_not_numbers(bad):
    with pytest.raises(InputError, match=r"^updates\[1\]\['w'\]: expected numbers of shape"):
        average_weights([{"w": np.array([1.0])}, {"w": bad}], keys=["w"])


def test_average_weights_of_numbers_is_unchanged():
    out = average_weights([{"w": np.array([1.0], np.float32)}, {"w": np.array([2], np.int64)}])
    assert out["w"].tolist() == [1.5] and out["w"].dtype == np.float32


def test_driver_refuses_a_state_of_another_silo_count():
    with pytest.raises(InputError, match="^state: expected a ProtocolState of n_silos=2, got 3"):
        ProtocolDriver(UEFLConfig(), 2, {}, state=ProtocolState(3))
    with pytest.raises(InputError, match="^state: "):
        ProtocolDriver(UEFLConfig(), 2, {}, state={"n_silos": 2})
    assert ProtocolDriver(UEFLConfig(), 3, {}, state=ProtocolState(3)).state.n_silos == 3
