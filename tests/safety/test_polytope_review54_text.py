"""SafetyPolytope took numeric strings through numpy's cast although it takes no strings."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope


@pytest.fixture(scope="module")
def polytope():
    X = np.random.default_rng(0).normal(size=(40, 3))
    return SafetyPolytope(random_state=0).fit(X, (X[:, 0] > 0).astype(int))


@pytest.mark.parametrize(
    ("method", "acts", "where"),
    [
        ("predict", [["1", "2", "3"]], "'1' at row 0, column 0"),  # was predicted: [1]
        ("decision_function", np.array([[1.0, 2.0, "3"]], dtype=object), "'3' at row 0, column 2"),
        ("is_unsafe", ["1", "2", "3"], "'1' at index 0"),
        ("violations", [[b"1", b"2", b"3"]], "at row 0, column 0"),
    ],
)
def test_text_is_refused_naming_acts(polytope, method, acts, where):
    with pytest.raises(InputError, match=r"acts: expected numbers, got text") as err:
        getattr(polytope, method)(acts)
    assert where in str(err.value)


def test_fit_refuses_text_and_numbers_in_an_object_array_stay_accepted(polytope):
    with pytest.raises(InputError, match=r"acts: expected numbers, got text \('0'"):
        SafetyPolytope().fit([["0", "1"], ["1", "0"]], [0, 1])
    numbers = np.array([[1, 2, 3]], dtype=object)
    assert polytope.predict(numbers).tolist() == polytope.predict([[1.0, 2.0, 3.0]]).tolist()
