"""A test_fraction that leaves a silo no training row is an InputError naming it (review 65).

40 digit silos of 44-45 images with test_fraction 0.99 gave silos of 0 training images and
stopped in apply_shift with numpy's 'cannot reshape array of size 0 into shape (0,newaxis)'.
"""

import pytest

from trustlab.errors import InputError
from trustlab.federated.silos import make_digit_silos


def test_a_test_fraction_leaving_no_training_row_is_refused():
    with pytest.raises(InputError, match=r"test_fraction: .*44 images \(40 silos\), got 0.99"):
        make_digit_silos(40, test_fraction=0.99)
    silos = make_digit_silos(40, "none", test_fraction=0.98)  # one training image each
    assert min(len(s.y_train) for s in silos) == 1
    assert sum(len(s.y_train) + len(s.y_test) for s in silos) == 1797


@pytest.mark.parametrize("shifts", [5, None, {"rotate": 10.0}])
def test_shifts_that_are_no_preset_nor_dicts_per_silo_are_refused(shifts):
    # 5 and None were a raw TypeError from list(); one dict's keys were read as the shifts
    with pytest.raises(InputError, match=r"^shifts: expected a preset name .* 1 shift dicts"):
        make_digit_silos(1, shifts)
