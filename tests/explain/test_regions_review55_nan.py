"""apply_mask with a NaN or infinite pixel outside the mask (review 55): ``x * m + fill * (1 - m)``
kept it as NaN (NaN * 0), so the masked image, and the logits of every network fed by it
(deletion and insertion curves, dynamic tau), depended on a pixel outside the selection, against
the docstring's 'exactly fill, whatever they held'. Outside pixels are now exactly ``fill``;
finite images give the same values and gradients as before."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.explain.regions import apply_mask  # noqa: E402


def test_non_finite_pixels_outside_the_mask_become_fill():
    x = torch.tensor([[[[np.nan, np.inf, 2.0], [-np.inf, 3.0, np.nan]]]])
    m = torch.tensor([[[[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]]])
    out = apply_mask(x, m, fill=-1.0)[0, 0]
    assert out[0].tolist() == [-1.0, -1.0, 2.0]
    assert out[1, :2].tolist() == [-1.0, 3.0] and bool(out[1, 2].isnan())  # inside: kept


def test_finite_images_keep_their_values_and_gradients():
    g = torch.Generator().manual_seed(5)
    x = torch.rand(2, 3, 4, 4, generator=g, dtype=torch.float64, requires_grad=True)
    m = torch.rand(2, 1, 4, 4, generator=g, dtype=torch.float64).requires_grad_()
    m.data[0, 0, 0] = 0.0  # an exact zero keeps its gradient (x - fill)
    out = apply_mask(x, m, fill=0.25)
    ref = x * m + 0.25 * (1 - m)
    assert torch.equal(out, ref)
    w = torch.rand(out.shape, generator=g, dtype=torch.float64)
    gx, gm = torch.autograd.grad((out * w).sum(), (x, m))
    rx, rm = torch.autograd.grad((ref * w).sum(), (x, m))
    assert torch.equal(gx, rx) and torch.equal(gm, rm)


def test_a_network_on_the_masked_image_ignores_nan_outside():
    g = torch.Generator().manual_seed(3)
    net = torch.nn.Conv2d(3, 2, 3, padding=1)
    x = torch.rand(1, 3, 6, 6, generator=g)
    m = (torch.rand(1, 1, 6, 6, generator=g) > 0.5).float()
    dirty = torch.where(m == 0, torch.tensor(float("nan")), x)
    with torch.no_grad():
        assert torch.equal(net(apply_mask(dirty, m)), net(apply_mask(x, m)))
