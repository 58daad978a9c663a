"""ProtocolState (and its from_dict, which reads checkpoints and Flower result files) checks
n_silos (review 66).

Measured on the old protocol.py: ProtocolState("3"), ProtocolState(2.5), ProtocolState(None)
and ProtocolState.from_dict({"n_silos": "2", "book_idx": [0, 0]}) stopped with Python's raw
"TypeError: can't multiply sequence by non-int of type 'str'" (from_dict promises an
InputError for a malformed mapping); ProtocolState(0) was a running state of no silos,
ProtocolState(True) a state of n_silos True, and ProtocolState(-1) was blamed on book_idx
('book_idx: expected one entry per silo (n_silos=-1), got list []'). Now each is
'n_silos: expected an integer >= 1, got ...'; integer states (numpy integers too) are built
and round-trip as before.
"""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated.protocol import ProtocolState


@pytest.mark.parametrize("n_silos", ["3", 2.5, None, 0, True, -1])
def test_an_n_silos_that_is_no_positive_integer_is_refused_naming_it(n_silos):
    with pytest.raises(InputError, match="n_silos: expected an integer >= 1") as info:
        ProtocolState(n_silos)
    assert info.value.argument == "n_silos"


def test_from_dict_refuses_a_text_n_silos_in_words():
    with pytest.raises(InputError, match="n_silos: expected an integer >= 1, got '2'"):
        ProtocolState.from_dict({"n_silos": "2", "book_idx": [0, 0]})


def test_integer_states_round_trip_as_before():
    state = ProtocolState(np.int64(3))
    assert state.n_silos == 3 and type(state.n_silos) is int and state.book_idx == [0, 0, 0]
    assert ProtocolState.from_dict(state.to_dict()) == state
