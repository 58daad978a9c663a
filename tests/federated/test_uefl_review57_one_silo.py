"""Review 57: simulate_uefl with one silo ended its message in a cut-off listing of the silo's
arrays ("got list [Silo(X_train=array([[0.63 ..."); it now names the count."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import Silo, simulate_uefl

X = np.zeros((4, 64), dtype=np.float32)
SILO = Silo(X, np.arange(4), X, np.arange(4))
EXPECTED = "silos: expected a sequence of at least 2 Silo objects, got "


@pytest.mark.parametrize(
    ("silos", "got"), [([SILO], "1 silo"), ((), "0 silos"), (SILO, "one Silo (not in a sequence)")]
)
def test_too_few_silos_are_counted_not_listed(silos, got):
    with pytest.raises(InputError) as info:
        simulate_uefl(silos)
    assert str(info.value) == EXPECTED + got
    assert info.value.argument == "silos"
