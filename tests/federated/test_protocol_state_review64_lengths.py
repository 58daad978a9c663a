"""Diff review 64 B: a ProtocolState whose book_idx or init_pending has another length than
n_silos was accepted (also by ProtocolDriver, which checks only n_silos) and the first
``plans()`` failed with a raw IndexError."""

import pytest

from trustlab.errors import InputError
from trustlab.federated import ProtocolDriver, ProtocolState, UEFLConfig


@pytest.mark.parametrize(
    ("field", "value"),
    [("book_idx", [0]), ("book_idx", [0, 1, 1]), ("init_pending", [True]), ("book_idx", 3)],
)
def test_state_lists_of_another_length_are_refused_by_name(field, value):
    with pytest.raises(InputError, match=rf"^{field}: expected one entry per silo \(n_silos=2\)"):
        ProtocolState(2, **{field: value})


def test_state_lists_of_the_silo_count_still_drive():
    state = ProtocolState(2, book_idx=[0, 1], init_pending=[True, False])
    plans = ProtocolDriver(UEFLConfig(), 2, {}, state=state).plans()
    assert [(p.book_idx, p.init_ext) for p in plans] == [(0, True), (1, False)]
    assert ProtocolState.from_dict(state.to_dict()) == state
