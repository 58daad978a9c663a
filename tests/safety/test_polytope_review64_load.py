"""Review 64: SafetyPolytope.load checks the arrays it reads. A NaN in one facet's offset
loaded silently and made every score NaN, so is_unsafe was False on every state (the
detector called everything safe); offsets of the wrong length failed later with numpy's
broadcast ValueError."""

import numpy as np
import pytest

from trustlab.errors import ResourceError
from trustlab.safety import SafetyPolytope


@pytest.fixture()
def saved(tmp_path):
    box = SafetyPolytope.from_parameters([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
    folder = box.save(tmp_path / "box")
    with np.load(folder / "polytope.npz") as data:
        return folder, dict(data)


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("offsets", [np.nan, 1.0], "offsets .*expected finite values of shape \\(2,\\), got NaN"),
        ("offsets", [1.0, 1.0, 1.0], "offsets .*got shape \\(3,\\)"),
        ("normals", np.zeros((0, 2)), "normals .*expected a non-empty 2-D array"),
        ("scale", [1.0, np.inf], "scale .*got NaN or inf"),
    ],
)
def test_arrays_that_save_does_not_write_are_refused(saved, name, value, words):
    folder, arrays = saved
    assert SafetyPolytope.load(folder).is_unsafe([[3.0, 0.0]]).all()  # as saved
    np.savez(folder / "polytope.npz", **{**arrays, name: np.asarray(value)})
    with pytest.raises(ResourceError, match=words):
        SafetyPolytope.load(folder)  # was loaded: NaN scores, [3, 0] called safe
