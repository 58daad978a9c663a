"""The VQ layer's fast path (review 67) against the arithmetic it replaces, bit for bit: the
nearest codeword by one addmm and min's index instead of the written-out distance and argmin,
and its rows by index_select instead of indexing (the same summed gradient). Ties are forced
(integer features and codewords), since they are where another kernel could pick another
codeword."""

import pytest

from trustlab.federated.model import VectorQuantizer

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _old_vq(vq, z):
    """VectorQuantizer.forward as it was before review 67."""
    codes = vq.codewords()
    flat = z.reshape(-1, vq.dim)
    with torch.no_grad():
        distances = flat.pow(2).sum(1, keepdim=True) + codes.pow(2).sum(1) - 2.0 * flat @ codes.t()
        index = distances.argmin(dim=1)
    quantized = codes[index].view_as(z)
    loss = F.mse_loss(quantized, z.detach()) + vq.commitment * F.mse_loss(quantized.detach(), z)
    if vq.task_gradient:
        straight_through = quantized + (z - z.detach())
    else:
        straight_through = z + (quantized - z).detach()
    usage = torch.bincount(index, minlength=codes.shape[0]).float() / index.numel()
    perplexity = torch.exp(-(usage * torch.log(usage + 1e-10)).sum())
    return straight_through, loss, perplexity


def _run(vq, z0, g, forward):
    vq.zero_grad()
    z = z0.clone().requires_grad_(True)
    out, loss, perplexity = forward(z)
    (out * g).sum().add(loss).backward()
    # a book outside the active ones has no gradient (zeros stand for it)
    books = [torch.zeros(1) if p.grad is None else p.grad.clone() for p in vq.books.values()]
    return [out.detach(), loss.detach(), perplexity.detach(), z.grad.clone(), *books]


@pytest.mark.parametrize("task", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_vq_layer_is_the_written_out_distance_and_argmin_bit_for_bit(task, ties):
    gen = torch.Generator().manual_seed(3)
    vq = VectorQuantizer(dim=4, n_codes=16, commitment=0.25, task_gradient=task)
    if ties:  # few distinct values: many vectors equally near two or more codewords
        with torch.no_grad():
            vq.books["0"].copy_(torch.randint(0, 2, (16, 4), generator=gen).float())
        vq.add_book(1, torch.randint(0, 2, (16, 4), generator=gen).float())
        z0 = torch.randint(0, 3, (32, 196, 4), generator=gen).float() * 0.5
    else:
        vq.add_book(1, torch.randn(16, 4, generator=gen))
        z0 = torch.randn(32, 196, 4, generator=gen)
    g = torch.randn(z0.shape, generator=gen)
    for book in (0, 1):
        vq.active_book = book
        new = _run(vq, z0, g, vq)
        old = _run(vq, z0, g, lambda z: _old_vq(vq, z))
        assert len(new) == len(old) == 6
        for got, want in zip(new, old, strict=True):
            assert torch.equal(got, want)
