"""Tests of trustlab.explain.regions.selection against independent oracles (numpy brute force,
closed forms, scipy's KS test, a per-image grid search)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
from scipy import stats  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.dynamic import dynamic_tau, dynamic_tau_sequential  # noqa: E402
from trustlab.explain.regions.selection import (  # noqa: E402
    TAU_GRID,
    apply_mask,
    correlated_logits,
    expected_kept_fraction,
    group_covariance,
    group_pool,
    hard_selection,
    jittered_cholesky,
    kl_sparsity,
    l1_sparsity,
    lambda_schedule,
    pixel_mask,
    relaxed_bernoulli,
    temperature_schedule,
)

torch.set_num_threads(1)


def random_segments(rng, b, h, w, ks):
    """Per-image label maps with K_i labels, every label present (blocks plus random pixels)."""
    seg = np.zeros((b, h, w), dtype=np.int64)
    for i, k in enumerate(ks):
        lab = rng.integers(0, k, size=(h, w))
        lab.flat[:k] = rng.permutation(k)  # each label at least once
        seg[i] = lab
    return torch.from_numpy(seg)


# ---------------------------------------------------------------- group pooling


def brute_pool(feats, seg, k):
    b, c, _, _ = feats.shape
    means = np.zeros((b, k, c))
    sizes = np.zeros((b, k), dtype=np.int64)
    for i in range(b):
        for g in range(k):
            where = seg[i] == g
            sizes[i, g] = where.sum()
            if sizes[i, g]:
                means[i, g] = feats[i][:, where].mean(axis=1)
    return means, sizes


def test_group_pool_matches_brute_force_with_padding():
    rng = np.random.default_rng(0)
    seg = random_segments(rng, 3, 7, 9, [5, 2, 8])
    feats = torch.from_numpy(rng.normal(size=(3, 4, 7, 9)))
    means, sizes = group_pool(feats, seg, n_groups=10)
    ref_m, ref_s = brute_pool(feats.numpy(), seg.numpy(), 10)
    assert means.shape == (3, 10, 4) and sizes.dtype == torch.long
    np.testing.assert_array_equal(sizes.numpy(), ref_s)
    np.testing.assert_allclose(means.numpy(), ref_m, rtol=1e-13, atol=1e-14)
    assert (sizes[1, 2:] == 0).all() and (means[1, 2:] == 0).all()  # padded groups
    assert (sizes.sum(1) == 7 * 9).all()
    # default n_groups = batch max label + 1
    assert group_pool(feats, seg)[0].shape == (3, 8, 4)


@settings(max_examples=15, deadline=None)
@given(
    b=st.integers(1, 3),
    h=st.integers(1, 6),
    w=st.integers(1, 6),
    k=st.integers(1, 6),
    seed=st.integers(0, 10_000),
)
def test_group_pool_property(b, h, w, k, seed):
    rng = np.random.default_rng(seed)
    seg = torch.from_numpy(rng.integers(0, k, size=(b, h, w)))  # some labels may be absent
    feats = torch.from_numpy(rng.normal(size=(b, 2, h, w)))
    means, sizes = group_pool(feats, seg, n_groups=k)
    ref_m, ref_s = brute_pool(feats.numpy(), seg.numpy(), k)
    np.testing.assert_array_equal(sizes.numpy(), ref_s)
    np.testing.assert_allclose(means.numpy(), ref_m, rtol=1e-12, atol=1e-13)


def test_group_pool_is_differentiable():
    seg = torch.tensor([[[0, 0, 1]]])
    feats = torch.zeros(1, 1, 1, 3, dtype=torch.float64, requires_grad=True)
    means, _ = group_pool(feats, seg)
    means[0, 0, 0].backward()
    np.testing.assert_allclose(feats.grad.flatten().numpy(), [0.5, 0.5, 0.0])


# ---------------------------------------------------------------- correlated logits


def test_correlated_logits_equals_numpy_cholesky_reparameterisation():
    rng = np.random.default_rng(1)
    mu = torch.from_numpy(rng.normal(size=(2, 5)))
    emb = torch.from_numpy(rng.normal(size=(2, 5, 3)))
    z = correlated_logits(mu, emb, n_samples=4, generator=7)
    eps = torch.randn((4, 2, 5), generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    for i in range(2):
        e = emb[i].numpy()
        chol = np.linalg.cholesky(e @ e.T + 1e-6 * np.eye(5))  # rank 3 of 5: 1e-6 suffices in f64
        ref = mu[i].numpy() + eps[:, i].numpy() @ chol.T
        np.testing.assert_allclose(z[:, i].numpy(), ref, rtol=1e-9, atol=1e-9)
    # the same seed gives the same draw; another seed another
    assert torch.equal(correlated_logits(mu, emb, n_samples=4, generator=7), z)
    assert not torch.equal(correlated_logits(mu, emb, n_samples=4, generator=8), z)


def test_correlated_logits_empirical_covariance():
    rng = np.random.default_rng(2)
    k, n = 4, 200_000
    mu = torch.from_numpy(rng.normal(size=(1, k)))
    emb = torch.from_numpy(rng.normal(size=(1, k, 3)))
    z = correlated_logits(mu, emb, n_samples=n, generator=3)[:, 0].numpy()
    e = emb[0].numpy()
    sigma = e @ e.T + 1e-6 * np.eye(k)
    # Standard errors: mean sqrt(S_ii / n); covariance entry sqrt((S_ii S_jj + S_ij^2) / n).
    # Five of them bound every entry (a false alarm has probability ~1e-5 over the 20 entries).
    se_mean = np.sqrt(np.diag(sigma) / n)
    assert np.all(np.abs(z.mean(0) - mu[0].numpy()) <= 5 * se_mean)
    d = np.diag(sigma)
    se_cov = np.sqrt((np.outer(d, d) + sigma**2) / n)
    assert np.all(np.abs(np.cov(z, rowvar=False) - sigma) <= 5 * se_cov)


def test_correlated_logits_padded_groups():
    rng = np.random.default_rng(3)
    mu = torch.from_numpy(rng.normal(size=(2, 6)))
    emb = torch.from_numpy(rng.normal(size=(2, 6, 3)))
    valid = torch.ones(2, 6, dtype=torch.bool)
    valid[1, 4:] = False
    z = correlated_logits(mu, emb, valid, n_samples=3, generator=0)
    assert torch.equal(z[:, 1, 4:], mu[1, 4:].expand(3, 2))  # padded: mu, no noise
    # garbage in the padded rows changes nothing in the real ones
    emb2 = emb.clone()
    emb2[1, 4:] = 1e3
    z2 = correlated_logits(mu, emb2, valid, n_samples=3, generator=0)
    torch.testing.assert_close(z2, z, rtol=0, atol=1e-12)
    # real groups of image 1 follow N(mu, E E^T) of the 4x4 block
    sigma = group_covariance(emb, valid)[1]
    assert (sigma[4:] == 0).all() and (sigma[:, 4:] == 0).all()


def test_jitter_escalates_on_rank_deficient_covariance():
    # float32, rank one, large entries: rounding errors (~1e-3) beat a 1e-6 jitter
    e = torch.full((1, 8, 3), 30.0)
    good = torch.randn(1, 8, 3, generator=torch.Generator().manual_seed(0))
    emb = torch.cat([e, good])
    cov = group_covariance(emb)
    chol, jitter = jittered_cholesky(cov)
    # brute-force oracle: the first of 1e-6 * 10^k whose Cholesky succeeds, per image
    for i in range(2):
        for p in range(20):
            j = torch.tensor(1e-6, dtype=torch.float32) * 10**p
            ok = torch.linalg.cholesky_ex(cov[i] + j * torch.eye(8))[1] == 0
            if ok:
                break
        assert jitter[i].item() == pytest.approx(j.item(), rel=1e-6)
    assert jitter[0] > 1e-6 and jitter[1] == pytest.approx(1e-6)
    assert torch.isfinite(chol).all()
    rebuilt = chol @ chol.transpose(1, 2)
    target = cov + jitter.view(2, 1, 1) * torch.eye(8)
    torch.testing.assert_close(rebuilt, target, rtol=1e-4, atol=1e-2)
    z = correlated_logits(torch.zeros(2, 8), emb, generator=0)
    assert torch.isfinite(z).all()


def test_correlated_logits_is_reparameterised():
    rng = np.random.default_rng(4)
    mu = torch.from_numpy(rng.normal(size=(2, 4))).requires_grad_()
    emb = torch.from_numpy(rng.normal(size=(2, 4, 3))).requires_grad_()
    z = correlated_logits(mu, emb, generator=5)
    (z**2).sum().backward()
    assert torch.isfinite(emb.grad).all() and emb.grad.abs().sum() > 0
    torch.testing.assert_close(mu.grad, 2 * z.detach())

    def fn(m, e):
        return correlated_logits(m, e, generator=11)

    assert torch.autograd.gradcheck(
        fn, (mu.detach().requires_grad_(), emb.detach().requires_grad_())
    )


def test_correlated_logits_without_covariance_is_mu():
    mu = torch.randn(3, 5, requires_grad=True)
    z = correlated_logits(mu, None, covariance=False)
    assert torch.equal(z, mu)
    assert correlated_logits(mu, covariance=False, n_samples=2).shape == (2, 3, 5)


# ---------------------------------------------------------------- relaxed Bernoulli, schedules


@pytest.mark.parametrize("p,t", [(0.3, 0.5), (0.8, 1.0)])
def test_relaxed_bernoulli_matches_concrete_cdf(p, t):
    m = relaxed_bernoulli(torch.full((20_000,), p, dtype=torch.float64), t, generator=1).numpy()

    def cdf(temp):  # P(m <= y) = sigmoid(T logit(y) - logit(p))
        def f(y):
            y = np.clip(y, 1e-300, 1 - 1e-16)
            return 1 / (1 + np.exp(-(temp * (np.log(y) - np.log1p(-y)) - math.log(p / (1 - p)))))

        return f

    assert stats.kstest(m, cdf(t)).pvalue > 1e-3
    assert stats.kstest(m, cdf(1.5 * t)).pvalue < 1e-3  # a wrong temperature is detected


def test_relaxed_bernoulli_gradient_and_checks():
    p = torch.full((5,), 0.4, requires_grad=True)
    relaxed_bernoulli(p, 0.5, generator=0).sum().backward()
    assert torch.isfinite(p.grad).all() and (p.grad > 0).all()
    with pytest.raises(InputError, match="temperature"):
        relaxed_bernoulli(p, 0.0)
    with pytest.raises(InputError, match="generator"):
        relaxed_bernoulli(p, 0.5, generator="x")


def test_temperature_schedule_boundaries():
    assert temperature_schedule(0, 100) == 1.0
    assert temperature_schedule(25, 100) == pytest.approx(0.5**0.5, rel=1e-15)
    assert temperature_schedule(50, 100) == 0.5 and temperature_schedule(99, 100) == 0.5
    values = [temperature_schedule(e, 100) for e in range(100)]
    assert all(a > b for a, b in zip(values[:50], values[1:51], strict=True))
    assert temperature_schedule(0, 1) == 1.0 and temperature_schedule(1, 1) == 0.5


def test_lambda_schedule_boundaries():
    assert lambda_schedule(0, 100) == pytest.approx(0.1)  # epoch 0: lam / 100, not lam
    assert lambda_schedule(9, 100) == pytest.approx(0.1)
    assert lambda_schedule(10, 100) == pytest.approx(0.1)
    assert lambda_schedule(30, 100) == pytest.approx(0.1 + 9.9 * 0.5)
    assert lambda_schedule(49, 100) == pytest.approx(0.1 + 9.9 * 39 / 40)
    assert lambda_schedule(50, 100) == 10.0 and lambda_schedule(99, 100) == 10.0
    assert lambda_schedule(0, 20, lam=1.0) == pytest.approx(0.01)
    with pytest.raises(InputError, match="epoch"):
        lambda_schedule(-1, 10)
    with pytest.raises(InputError, match="max_epochs"):
        temperature_schedule(0, 0)


# ---------------------------------------------------------------- sparsity loss


def kl_formula(p, tau, eps=1e-6):
    return -math.log(1 - tau + eps - max(p - tau, 0.0)) + math.log(1 - tau + eps)


@settings(max_examples=60, deadline=None)
@given(
    p1=st.floats(0, 1),
    p2=st.floats(0, 1),
    tau=st.floats(0.01, 1.0),
)
def test_kl_sparsity_properties(p1, p2, tau):
    val = kl_sparsity(torch.tensor([p1, p2], dtype=torch.float64), tau)
    assert torch.isfinite(val).all()
    for p, v in zip((p1, p2), val.tolist(), strict=True):
        assert v == pytest.approx(kl_formula(p, tau), rel=1e-12, abs=1e-12)
        if p <= tau:
            assert v == 0.0
    lo, hi = sorted((p1, p2))
    if tau < lo < hi:
        assert kl_sparsity(torch.tensor(lo, dtype=torch.float64), tau) < kl_sparsity(
            torch.tensor(hi, dtype=torch.float64), tau
        )


def test_kl_and_l1_per_image_tau_and_checks():
    p = torch.tensor([0.1, 0.5, 1.0], dtype=torch.float64)
    tau = torch.tensor([0.2, 0.2, 0.5], dtype=torch.float64)
    np.testing.assert_allclose(
        kl_sparsity(p, tau).numpy(),
        [kl_formula(a, b) for a, b in zip([0.1, 0.5, 1.0], [0.2, 0.2, 0.5], strict=True)],
    )
    np.testing.assert_allclose(l1_sparsity(p, tau).numpy(), [0.0, 0.3, 0.5])
    with pytest.raises(InputError, match="tau"):
        kl_sparsity(p, 0.0)
    with pytest.raises(InputError, match="p_bar"):
        l1_sparsity(torch.tensor([1.5]), 0.2)


def test_expected_kept_fraction_is_pixel_average():
    rng = np.random.default_rng(5)
    seg = random_segments(rng, 2, 6, 7, [4, 6])
    mu = torch.from_numpy(rng.normal(size=(2, 6)) * 3)
    _, sizes = group_pool(torch.zeros(2, 1, 6, 7, dtype=torch.float64), seg, 6)
    got = expected_kept_fraction(mu, sizes).numpy()
    sig = 1 / (1 + np.exp(-mu.numpy()))
    ref = [sig[i][seg[i].numpy()].mean() for i in range(2)]  # per-pixel average
    np.testing.assert_allclose(got, ref, rtol=1e-13)


# ---------------------------------------------------------------- masks and faithfulness


def test_pixel_mask_constant_in_segments_and_exact_fraction():
    rng = np.random.default_rng(6)
    seg = random_segments(rng, 3, 8, 8, [5, 9, 3])
    mu = torch.from_numpy(rng.normal(size=(3, 9)))
    valid = torch.from_numpy(np.arange(9)[None] < np.array([5, 9, 3])[:, None])
    sel = hard_selection(mu, valid)
    assert not sel[~valid].any()
    assert torch.equal(sel, (torch.sigmoid(mu) > 0.5) & valid)
    pm = pixel_mask(sel, seg)
    assert pm.shape == (3, 1, 8, 8) and pm.dtype == torch.bool
    _, sizes = group_pool(torch.zeros(3, 1, 8, 8), seg, 9)
    for i in range(3):
        for g in range(9):
            vals = pm[i, 0][seg[i] == g]
            assert vals.numel() == 0 or (vals == sel[i, g]).all()  # constant, equal to the group
        assert int(pm[i].sum()) == int(sizes[i][sel[i]].sum())  # kept area exact


def random_cnn(c_in, n_out, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Conv2d(c_in, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(16, n_out),
    ).double()


def test_apply_mask_formula_and_faithfulness():
    rng = np.random.default_rng(7)
    x = torch.from_numpy(rng.normal(size=(2, 3, 6, 6)))
    soft = torch.from_numpy(rng.uniform(size=(2, 1, 6, 6)))
    fill = [-2.1, -2.0, -1.8]
    ref = x.numpy() * soft.numpy() + np.array(fill).reshape(1, 3, 1, 1) * (1 - soft.numpy())
    np.testing.assert_allclose(apply_mask(x, soft, fill).numpy(), ref, rtol=1e-15)

    seg = random_segments(rng, 2, 6, 6, [6, 6])
    sel = torch.from_numpy(rng.uniform(size=(2, 6)) < 0.5)
    pm = pixel_mask(sel, seg)
    outside = ~pm.expand(2, 3, 6, 6)
    x2 = x.clone()
    x2[outside] = torch.from_numpy(rng.normal(size=int(outside.sum())) * 100)
    a, b = apply_mask(x, pm, fill), apply_mask(x2, pm, fill)
    assert torch.equal(a, b)  # pixels outside the selection cannot matter
    net = random_cnn(3, 5, 0)
    with torch.no_grad():
        assert torch.equal(net(a), net(b))
        x3 = x.clone()
        x3[~outside] += 1.0  # noise inside does change the logits
        assert (net(apply_mask(x3, pm, fill)) - net(a)).abs().max() > 1e-6
    assert torch.equal(
        a[outside].view(-1),
        torch.tensor(fill, dtype=torch.float64).view(1, 3, 1, 1).expand(2, 3, 6, 6)[outside],
    )


# ---------------------------------------------------------------- dynamic tau


class Selector(torch.nn.Module):
    """Random per-pixel scores pooled per segment, shifted up as tau grows."""

    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.conv = torch.nn.Conv2d(3, 1, 3, padding=1).double()

    def forward(self, x, seg, tau):
        score = self.conv(x)
        mu, _ = group_pool(score, seg)
        return mu[..., 0] * 3 + 12 * (tau.view(-1, 1) - 0.5)


def dyn_setup(seed=0, b=6):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.normal(size=(b, 3, 10, 10)))
    seg = random_segments(rng, b, 10, 10, rng.integers(4, 12, size=b))
    sel = Selector(seed)
    cnn = random_cnn(3, 4, seed + 1)

    def classify(z):  # sharper the more pixels are kept (kept pixels differ from the fill)
        kept = (z != -1.0).any(1).double().mean((1, 2)).view(-1, 1)
        return cnn(z) * 40 * kept

    return x, seg, sel, classify


def brute_conf(select, classify, x, seg, fill):
    """Max softmax of every (image, level), one image and one level at a time."""
    conf = np.zeros((len(x), len(TAU_GRID)))
    with torch.no_grad():
        for i in range(len(x)):
            for li, t in enumerate(TAU_GRID):
                mu = select(x[i : i + 1], seg[i : i + 1], torch.tensor([t], dtype=x.dtype))
                m = (torch.sigmoid(mu) > 0.5).double()
                pm = m[0][seg[i]]
                xm = x[i : i + 1] * pm + fill * (1 - pm)
                conf[i, li] = torch.softmax(classify(xm).double(), 1).max().item()
    return conf


def test_dynamic_tau_batched_sequential_and_brute_force_agree():
    x, seg, select, classify = dyn_setup()
    conf = brute_conf(select, classify, x, seg, -1.0)
    deltas = sorted({0.5, *np.quantile(conf, [0.3, 0.6, 0.85]).round(4).tolist(), 0.999999})
    batched = dynamic_tau(select, classify, x, seg, deltas, fill=-1.0)
    seq = dynamic_tau_sequential(select, classify, x, seg, deltas, fill=-1.0)
    chunked = dynamic_tau(select, classify, x, seg, deltas, fill=-1.0, chunk_size=7)
    looped = dynamic_tau(select, classify, x, seg, deltas, fill=-1.0, batch_levels=False)
    expect = np.zeros((len(deltas), len(x)))
    for di, d in enumerate(deltas):
        for i in range(len(x)):
            hits = np.nonzero(conf[i] >= d)[0]
            expect[di, i] = TAU_GRID[hits[0]] if len(hits) else 1.0
    for r in (batched, seq, chunked, looped):
        assert r.tau.shape == (len(deltas), len(x))
        np.testing.assert_array_equal(r.tau, expect)  # exact grid values
        assert set(r.tau.ravel()) <= set(TAU_GRID)
        np.testing.assert_array_equal(
            r.certain, np.array([[c.max() >= d for c in conf] for d in deltas])
        )
    assert len(set(expect.ravel())) >= 4  # the check is not trivial: several levels chosen
    assert not batched.certain.all() and batched.certain.any()
    for r in (seq, chunked):
        assert torch.equal(r.group_mask, batched.group_mask)
        assert torch.equal(r.mask, batched.mask)
        torch.testing.assert_close(r.logits, batched.logits, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r.confidence, batched.confidence, rtol=1e-12)
    assert seq.classifier_rows <= batched.classifier_rows == len(x) * 20
    # monotone in delta per instance
    assert (np.diff(batched.tau, axis=0) >= 0).all()
    # kept fraction is exact and matches the masks
    _, sizes = group_pool(torch.zeros(len(x), 1, 10, 10), seg)
    for di in range(len(deltas)):
        for i in range(len(x)):
            sel = batched.group_mask[di, i, : sizes.shape[1]]
            assert batched.kept_fraction[di, i] == int(sizes[i][sel].sum()) / 100
    d = batched.to_dict()
    assert d["tau"] == batched.tau.tolist() and "logits" not in d
    assert "delta" in batched.summary()


def test_dynamic_tau_single_delta_shapes():
    x, seg, select, classify = dyn_setup(seed=3, b=3)
    r = dynamic_tau(select, classify, x, seg, 0.9)
    assert r.tau.shape == (3,) and r.logits.shape == (3, 4) and r.mask.shape == (3, 10, 10)
    s = dynamic_tau_sequential(select, classify, x, seg, 0.9)
    np.testing.assert_array_equal(r.tau, s.tau)


def test_dynamic_tau_bad_input():
    x, seg, select, classify = dyn_setup(b=2)
    for bad in (0.0, 1.5, float("nan"), [0.5, 0.0], "high", []):
        with pytest.raises(InputError, match="delta"):
            dynamic_tau(select, classify, x, seg, bad)
    with pytest.raises(InputError, match="segments"):
        dynamic_tau(select, classify, x, seg[:, :5], 0.9)
    with pytest.raises(InputError, match="segments"):
        dynamic_tau_sequential(select, classify, x, seg[:1], 0.9)
    with pytest.raises(InputError, match="images"):
        dynamic_tau(select, classify, x[0], seg, 0.9)
    with pytest.raises(InputError, match="select_fn"):
        dynamic_tau(lambda a, b, t: torch.zeros(3), classify, x, seg, 0.9)
    with pytest.raises(InputError, match="classify_fn"):
        dynamic_tau(select, lambda z: torch.zeros(len(z)), x, seg, 0.9)
    with pytest.raises(InputError, match="segments"):
        group_pool(x, seg[:1])
    with pytest.raises(InputError, match="segments"):
        group_pool(x, -seg - 1)
    with pytest.raises(InputError, match="n_groups"):
        group_pool(x, seg, n_groups=2)
    with pytest.raises(InputError, match="fill"):
        apply_mask(x, torch.ones(2, 1, 10, 10), fill=[0.0, 1.0])
    with pytest.raises(InputError, match="mask"):
        apply_mask(x, torch.ones(2, 1, 9, 10))
    with pytest.raises(InputError, match="emb"):
        correlated_logits(torch.zeros(2, 3), torch.zeros(2, 4, 3))
    with pytest.raises(InputError, match="group_mask"):
        pixel_mask(torch.ones(2, 2, dtype=torch.bool), seg)
