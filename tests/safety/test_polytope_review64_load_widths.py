"""Review 64 (diff review L of aa854936): SafetyPolytope.load checked the saved arrays' shapes
against each other but not a linear polytope's normals against its width, nor the scale's
sign. Normals of width 3 in a 4-feature polytope loaded and failed at the first use with
numpy's 'matmul: Input operand 1 has a mismatch in its core dimension'; a scale of 0 loaded
and every state scored inf (all flagged). Both are now refused as the file not being what
``save`` writes."""

import numpy as np
import pytest

from trustlab.errors import ResourceError
from trustlab.safety import SafetyPolytope


def _saved(tmp_path, change):
    folder = SafetyPolytope.from_parameters([[1.0, 0, 0, 0], [0, 1.0, 0, 0]], [1.0, 1.0]).save(
        tmp_path / "p"
    )
    arrays = dict(np.load(folder / "polytope.npz"))
    change(arrays)
    np.savez(folder / "polytope.npz", **arrays)
    return folder


def test_a_saved_polytope_still_loads(tmp_path):
    polytope = SafetyPolytope.load(_saved(tmp_path, lambda arrays: None))
    assert polytope.is_unsafe([[3.0, 0, 0, 0], [0.5, 0, 0, 0]]).tolist() == [True, False]


def test_normals_narrower_than_the_activations_are_refused(tmp_path):
    folder = _saved(tmp_path, lambda a: a.update(normals=a["normals"][:, :3]))
    with pytest.raises(ResourceError, match=r"normals is not .*shape \(2, 4\), got shape \(2, 3\)"):
        SafetyPolytope.load(folder)


def test_a_scale_of_zero_is_refused(tmp_path):
    folder = _saved(tmp_path, lambda a: a["scale"].__setitem__(0, 0.0))
    with pytest.raises(ResourceError, match=r"scale is not .*values > 0 .*got a value <= 0"):
        SafetyPolytope.load(folder)
