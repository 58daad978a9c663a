"""The VQ layer's nearest codeword (c45b1d30, review 67: one addmm with alpha=-2 and min's
index) against the written-out distance and argmin on near ties: vectors halfway between two
codewords, a few ulps off, where the rounding of the distance decides the codeword. The exact
ties of test_uefl_speed_review67_vq.py pass with any exact arithmetic (a Euclidean cdist, the
same sum in another order); these do not, so a change of the distance's floats is caught."""

import pytest

from trustlab.federated.model import VectorQuantizer

torch = pytest.importorskip("torch")


def _old_index(codes, flat):
    """VectorQuantizer's codeword choice before review 67."""
    distances = flat.pow(2).sum(1, keepdim=True) + codes.pow(2).sum(1) - 2.0 * flat @ codes.t()
    return distances.argmin(dim=1)


@pytest.mark.parametrize("book", [0, 1])
def test_vq_picks_the_old_codeword_on_near_ties_bit_for_bit(book):
    gen = torch.Generator().manual_seed(11)
    vq = VectorQuantizer(dim=4, n_codes=16)
    with torch.no_grad():
        vq.books["0"].copy_(torch.randn(16, 4, generator=gen))
    vq.add_book(1, torch.randn(16, 4, generator=gen))
    vq.active_book = book
    codes = vq.codewords().detach()
    a = torch.randint(0, len(codes), (6272,), generator=gen)
    b = (a + torch.randint(1, len(codes), (6272,), generator=gen)) % len(codes)
    nudge = torch.randint(-4, 5, (6272, 4), generator=gen) * 1e-7
    flat = 0.5 * (codes[a] + codes[b]) + nudge  # halfway, a few ulps off
    z = flat.view(32, 196, 4).requires_grad_(True)
    want = _old_index(codes, flat)
    assert int((want != a).sum()) > 1000 and int((want != b).sum()) > 1000  # both sides chosen
    out, _, _ = vq(z)  # the straight-through value z + (e - z), as the old forward made it
    assert torch.equal(out, z.detach() + (codes[want].view_as(z) - z.detach()))
