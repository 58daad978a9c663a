"""Review 67 (third reader O of 8998166f): segments read through the same tensor helper.

8998166f made masks and soft maps share metrics._from_tensor (detached, bfloat16 as float32),
but the segments of random_area_masks kept their own ``.detach().cpu().numpy()``: measured on
8998166f, a bfloat16 tensor of segments stopped on torch's raw 'TypeError: Got unsupported
ScalarType BFloat16' where a float32 one is refused as ``segments`` (no integer labels). Now
the same refusal by name; integer tensors of each width read as the same numpy labels."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.regions import random_area_masks

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_float_tensor_segments_are_refused_by_name(dtype):
    seg = torch.zeros((1, 4, 4), dtype=getattr(torch, dtype))
    with pytest.raises(InputError, match=r"^segments: expected a non-empty integer array"):
        random_area_masks(seg, 0.5, random_state=0)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64"])
def test_integer_tensor_segments_read_as_numpy(dtype):
    seg = np.arange(32).reshape(2, 4, 4) % 5
    want = random_area_masks(seg, 0.5, random_state=0)
    got = random_area_masks(torch.as_tensor(seg).to(getattr(torch, dtype)), 0.5, random_state=0)
    np.testing.assert_array_equal(got, want)
