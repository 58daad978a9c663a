"""The fast paths of local training against the arithmetic they replace (stop 62): Adam's
_foreach_ step against torch's per-tensor loop, and k-means' prefix test of distinct rows
against sorting every row."""

import numpy as np
import pytest

from trustlab.federated.silos import _has_distinct_rows

torch = pytest.importorskip("torch")


def _loop_adam(params, grads_per_step, lr=5e-3, betas=(0.9, 0.999), eps=1e-8):
    """The per-parameter loop Adam.step ran before (torch's CPU arithmetic)."""
    beta1, beta2 = betas
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    steps = [0] * len(params)
    with torch.no_grad():
        for grads in grads_per_step:
            for i, (p, g) in enumerate(zip(params, grads, strict=True)):
                if g is None:
                    continue
                steps[i] += 1
                m[i].lerp_(g, 1 - beta1)
                v[i].mul_(beta2).addcmul_(g, g, value=1 - beta2)
                step_size = lr / (1 - beta1 ** steps[i])
                denom = (v[i].sqrt() / (1 - beta2 ** steps[i]) ** 0.5).add_(eps)
                p.addcdiv_(m[i], denom, value=-step_size)
    return params, m, v


def test_foreach_adam_is_the_per_tensor_loop_bit_for_bit():
    from trustlab.federated.model import Adam

    gen = torch.Generator().manual_seed(0)
    shapes = [(16, 1, 3, 3), (16,), (64, 49), (10, 64), (16, 4)]
    start = [torch.randn(s, generator=gen) for s in shapes]
    # the last parameter misses every third step, so two step counts meet in one step
    grads = [[None if (j == 4 and k % 3 == 0) else torch.randn(s, generator=gen) * 10.0 ** (k % 5 - 2)
              for j, s in enumerate(shapes)] for k in range(12)]  # fmt: skip
    reference, m_ref, v_ref = _loop_adam([p.clone() for p in start], grads)
    params = [torch.nn.Parameter(p.clone()) for p in start]
    opt = Adam(params, learning_rate=5e-3)
    for step in grads:
        for p, g in zip(params, step, strict=True):
            p.grad = g
        opt.step()
    for got, want in zip(
        params + opt.exp_avg + opt.exp_avg_sq, reference + m_ref + v_ref, strict=True
    ):
        assert torch.equal(got.detach(), want)
    assert opt.steps == [12, 12, 12, 12, 8]


def test_distinct_rows_by_prefix_agrees_with_sorting_every_row():
    rng = np.random.default_rng(0)
    for n in (1, 3, 16, 40):
        for distinct in {1, max(n - 1, 1), n, 3 * n}:
            rows = rng.normal(size=(distinct, 4))
            late = np.r_[np.repeat(rows[:1], 600, 0), rows]  # the distinct rows come last
            for X in (rows[rng.integers(0, distinct, 600)], late):
                assert _has_distinct_rows(X, n) == (len(np.unique(X, axis=0)) >= n)
