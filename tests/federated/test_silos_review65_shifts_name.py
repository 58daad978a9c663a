"""Review 65: make_digit_silos(shifts='foo') named the argument ``shift`` (default_shifts'
check) though the user's argument is ``shifts``; simulate_uefl(shift=...) keeps ``shift``."""

import pytest

from trustlab.errors import InputError
from trustlab.federated import make_digit_silos, simulate_uefl
from trustlab.federated.silos import default_shifts


def test_an_unknown_preset_names_shifts():
    with pytest.raises(InputError, match=r"^shifts: expected one of 'rotation'.*got 'foo'"):
        make_digit_silos(shifts="foo")


def test_default_shifts_names_preset_and_simulate_names_shift():
    with pytest.raises(InputError, match=r"^preset: expected one of"):
        default_shifts(3, "foo")
    with pytest.raises(InputError, match=r"^shift: expected one of"):
        simulate_uefl(n_silos=2, shift="foo", rounds=1)
