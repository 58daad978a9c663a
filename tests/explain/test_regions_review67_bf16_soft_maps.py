"""pxap reads bfloat16 soft maps as their float32 values (diff review 67 J of dde4aab8).

dde4aab8 made _soft_maps call ``value.detach().cpu().numpy()`` on a torch tensor before its
``try``; numpy has no bfloat16, so bfloat16 soft maps, which its parent refused by name
('soft_maps: expected a numeric array ...'), stopped on torch's raw 'TypeError: Got unsupported
ScalarType BFloat16' (measured on c5786d74, pxap and pxap_per_image). As 0a51bb4b does for the
fidelity curves' logits, they are now upcast to float32, which holds every bfloat16 value, so the
scores equal those of the same values in float32.
"""

import numpy as np
import pytest
import torch

from trustlab.explain.regions import pxap
from trustlab.explain.regions.metrics import pxap_per_image

TRUTH = np.array([[[1, 0, 0, 1], [0, 1, 0, 0]]])


@pytest.mark.parametrize("n_bins", [None, 4])
def test_bfloat16_soft_maps_score_as_their_float32_values(n_bins):
    soft = torch.tensor([[[0.9, 0.2, 0.4, 0.6], [0.3, 0.7, 0.55, 0.1]]]).to(torch.bfloat16)
    same = soft.float()
    assert pxap(soft, TRUTH, n_bins) == pxap(same, TRUTH, n_bins)
    assert (
        pxap_per_image(soft, TRUTH, n_bins).tolist() == pxap_per_image(same, TRUTH, n_bins).tolist()
    )
    soft.requires_grad_()
    assert pxap(soft, TRUTH, n_bins) == pxap(same, TRUTH, n_bins)
