"""The regions metrics read torch masks detached and bfloat16 masks as float32 (diff review 67 J).

Beside dde4aab8, which read soft maps detached: measured on c5786d74, a bfloat16 tensor given as
``truth`` to pxap, mask_iou or localisation_precision (or as their ``masks``) stopped on torch's
raw 'TypeError: Got unsupported ScalarType BFloat16', and a float mask tensor with requires_grad
on torch's raw 'RuntimeError: Can't call numpy() on Tensor that requires grad'. Both now read as
the same 0/1 values in float32 would.
"""

import numpy as np
import pytest
import torch

from trustlab.explain.regions import localisation_precision, mask_iou, pxap

TRUTH = torch.tensor([[[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]]])
MASKS = np.array([[[1, 1, 0, 0], [0, 1, 0, 0]]], dtype=bool)
SOFT = np.array([[[0.9, 0.2, 0.4, 0.6], [0.3, 0.7, 0.55, 0.1]]])


@pytest.mark.parametrize("kind", ["bfloat16", "requires_grad"])
def test_torch_masks_read_as_their_values(kind):
    given = TRUTH.bfloat16() if kind == "bfloat16" else TRUTH.clone().requires_grad_()
    plain = TRUTH.numpy()
    assert pxap(SOFT, given) == pxap(SOFT, plain)
    assert mask_iou(MASKS, given).tolist() == mask_iou(MASKS, plain).tolist()
    assert localisation_precision(given, plain).tolist() == [1.0]
    assert localisation_precision(MASKS, given).tolist() == (
        localisation_precision(MASKS, plain).tolist()
    )
