"""Tests of trustlab.explain.regions.models: the selector and classifier networks (spec 12).

Oracles: numpy brute-force segment means, per-level calls against the one-backbone path, the
closed form mu(tau) = mu(0) + tau * sum(logit head weights), bit-identity under out-of-selection
noise (check 1 of spec 12), per-image evaluation against batched evaluation, and a brute-force
per-level search for dynamic tau.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.data import bam_lite  # noqa: E402
from trustlab.explain.regions.dynamic import dynamic_tau, dynamic_tau_sequential  # noqa: E402
from trustlab.explain.regions.models import Classifier, Selector, masked_logits  # noqa: E402
from trustlab.explain.regions.segments import superpixels  # noqa: E402
from trustlab.explain.regions.selection import (  # noqa: E402
    TAU_GRID,
    correlated_logits,
    hard_selection,
    relaxed_bernoulli,
)

torch.set_num_threads(1)

SIDE = 32  # small images keep the file fast; 64 is the target size (checked once below)


@pytest.fixture(scope="module")
def bam():
    ds = bam_lite(6, size=SIDE, random_state=0)
    seg = superpixels(ds.images, n_segments=24)
    return torch.from_numpy(ds.images), torch.from_numpy(seg).long(), ds


def nets(seed=0, dtype=torch.float32, n_classes=10):
    torch.manual_seed(seed)
    return Selector().to(dtype), Classifier(n_classes).to(dtype)


# ---------------------------------------------------------------- shapes and target size


def test_shapes_at_64():
    sel, clf = nets()
    x = torch.rand(2, 3, 64, 64)
    logit, emb = sel(x, torch.tensor([0.1, 0.9]))
    assert logit.shape == (2, 1, 64, 64) and emb.shape == (2, 3, 64, 64)
    assert sel.features(x).shape == (2, 16, 64, 64)
    assert clf(x).shape == (2, 10)
    assert Selector(widths=(8, 12)).features(x).shape == (2, 8, 64, 64)


# ---------------------------------------------------------------- check 1: faithfulness


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_faithfulness_by_construction(bam, mode):
    x, seg, _ = bam
    sel, clf = nets(1)
    getattr(clf, mode)()
    with torch.no_grad():
        mu, _, sizes = sel.select(x, seg, torch.full((len(x),), 0.5))
    # a hard selection with about half of the groups: the groups whose mu is above the median
    med = torch.stack([m[s > 0].median() for m, s in zip(mu, sizes, strict=True)])
    group = (mu > med.unsqueeze(1)) & (sizes > 0)
    assert group.any(1).all() and (~group & (sizes > 0)).any(1).all()
    inside = torch.gather(group, 1, seg.reshape(len(x), -1)).view_as(seg).unsqueeze(1)
    fill = [-0.5, 0.1, 0.3]
    with torch.no_grad():
        ref = masked_logits(clf, x, seg, group, fill)
        gen = torch.Generator().manual_seed(3)
        for _ in range(3):
            noise = torch.rand(x.shape, generator=gen) * 4 - 2
            outside = torch.where(inside, x, noise)  # random values outside the selection
            out = masked_logits(clf, outside, seg, group, fill)
            assert torch.equal(out, ref)  # bit-identical
            within = torch.where(inside, noise, x)  # noise inside the selection
            changed = masked_logits(clf, within, seg, group, fill)
            assert (changed - ref).abs().amax(1).min() > 1e-4


def test_logits_of_an_image_do_not_depend_on_the_batch():
    torch.manual_seed(4)
    clf = Classifier(5).double()
    x = torch.rand(5, 3, 16, 16, dtype=torch.float64)
    for mode in ("eval", "train"):
        getattr(clf, mode)()
        with torch.no_grad():
            batch = clf(x)
            other = clf(torch.cat([x[:2], torch.rand(3, 3, 16, 16, dtype=torch.float64) * 9]))
            for i in range(5):
                np.testing.assert_allclose(clf(x[i : i + 1])[0], batch[i], rtol=0, atol=1e-12)
            np.testing.assert_allclose(other[:2], batch[:2], rtol=0, atol=1e-12)


def test_batchnorm_would_fail_the_batch_test():
    """The oracle above can fail: a BatchNorm network in training mode does mix images."""
    torch.manual_seed(4)
    bn = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).double().train()
    x = torch.rand(3, 3, 8, 8, dtype=torch.float64)
    assert (bn(x)[0] - bn(x[:1])[0]).abs().max() > 1e-3


# ---------------------------------------------------------------- tau conditioning


def test_tau_changes_the_maps_and_heads_compose():
    sel, _ = nets(2, torch.float64)
    x = torch.rand(3, 3, 16, 16, dtype=torch.float64)
    a = sel(x, torch.full((3,), 0.1, dtype=torch.float64))
    b = sel(x, torch.full((3,), 0.9, dtype=torch.float64))
    assert (a[0] - b[0]).abs().min() > 0 and (a[1] - b[1]).abs().amax() > 1e-6
    f = sel.features(x)
    tau = torch.tensor([0.2, 0.5, 0.8], dtype=torch.float64)
    for got, want in zip(sel(x, tau), sel.heads(f, tau), strict=True):
        assert torch.equal(got, want)
    # tau is added to every element entering the heads: closed form with the head weights
    g = f + tau.view(-1, 1, 1, 1)
    w, bias = sel.logit_head.weight[:, :, 0, 0], sel.logit_head.bias
    ref = torch.einsum("oc,bchw->bohw", w, g) + bias.view(1, -1, 1, 1)
    np.testing.assert_allclose(sel(x, tau)[0].detach(), ref.detach(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype,atol", [(torch.float32, 1e-6), (torch.float64, 1e-12)])
def test_select_levels_equals_select_per_level(bam, dtype, atol):
    x, seg, _ = bam
    x = x.to(dtype)
    sel, _ = nets(5, dtype)
    taus = torch.tensor(TAU_GRID, dtype=dtype)
    with torch.no_grad():
        levels = sel.select_levels(x, seg, taus)
        k = levels.shape[2]
        assert levels.shape == (len(x), len(TAU_GRID), int(seg.max()) + 1)
        for li, t in enumerate(TAU_GRID):
            mu, _, sizes = sel.select(x, seg, torch.full((len(x),), t, dtype=dtype), n_groups=k)
            np.testing.assert_allclose(levels[:, li], mu, rtol=0, atol=atol)
        # linear in tau: mu(tau) = mu(0) + tau * sum(logit head weights) on the real groups
        mu0, _, sizes = sel.select(x, seg, 0.0, n_groups=k)
        slope = sel.logit_head.weight.sum()
        for li, t in enumerate(TAU_GRID):
            want = torch.where(sizes > 0, mu0 + t * slope, torch.zeros_like(mu0))
            np.testing.assert_allclose(levels[:, li], want, rtol=0, atol=atol)
    assert abs(float(slope)) > 1e-3  # the identity is not trivially 0 = 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 7), side=st.sampled_from([4, 8, 12]))
def test_select_means_match_numpy_brute_force(seed, k, side):
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    sel = Selector(widths=(4, 8)).double()
    x = torch.from_numpy(rng.random((2, 3, side, side)))
    seg = torch.from_numpy(rng.integers(0, k, size=(2, side, side)))
    tau = torch.from_numpy(rng.random(2))
    with torch.no_grad():
        mu, emb, sizes = sel.select(x, seg, tau, n_groups=k)
        logit, e = sel(x, tau)
    maps = torch.cat([logit, e], 1).numpy()
    for i in range(2):
        for g in range(k):
            where = seg[i].numpy() == g
            assert sizes[i, g] == where.sum()
            want = maps[i][:, where].mean(1) if where.any() else np.zeros(4)
            np.testing.assert_allclose(mu[i, g], want[0], rtol=1e-12, atol=1e-13)
            np.testing.assert_allclose(emb[i, g], want[1:], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------- gradients


def test_gradients_reach_the_selector_through_a_soft_mask(bam):
    x, seg, ds = bam
    sel, clf = nets(6)
    mu, emb, sizes = sel.select(x, seg, torch.rand(len(x)))
    z = correlated_logits(mu, emb, sizes > 0, generator=0)  # spec step 2: emb enters here
    mask = relaxed_bernoulli(torch.sigmoid(z), 0.5, generator=0)
    logits = masked_logits(clf, x, seg, mask, fill=0.0)
    loss = torch.nn.functional.cross_entropy(logits, torch.as_tensor(ds.labels).long())
    loss.backward()
    for name, p in list(sel.named_parameters()) + list(clf.named_parameters()):
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().max() > 0, name


# ---------------------------------------------------------------- dynamic tau


def test_dynamic_tau_with_the_networks(bam):
    x, seg, _ = bam
    sel, clf = nets(7)
    sel.eval(), clf.eval()
    with torch.no_grad():
        # centre the group logits so that the selection grows from few groups to all over tau
        mu0, _, sizes = sel.select(x, seg, 0.0)
        sel.logit_head.weight.mul_(4.0 / sel.logit_head.weight.sum())  # slope 4 per unit of tau
        sel.logit_head.bias.sub_(mu0[sizes > 0].median() * 1.0 + 2.0)
        levels = sel.select_levels(x, seg, TAU_GRID)
        # brute force: the confidence at every level
        conf = torch.stack(
            [
                torch.softmax(
                    masked_logits(clf, x, seg, hard_selection(levels[:, li], sizes > 0)).double(),
                    1,
                ).amax(1)
                for li in range(len(TAU_GRID))
            ],
            1,
        )
    deltas = sorted({float(v) for v in np.quantile(conf.numpy(), [0.2, 0.5, 0.8])})

    def select_fn(xx, ss, tt):
        return sel.select(xx, ss, tt)[0]

    fast = dynamic_tau(select_fn, clf, x, seg, deltas, chunk_size=64, levels_fn=sel.select_levels)
    plain = dynamic_tau(select_fn, clf, x, seg, deltas)
    seq = dynamic_tau_sequential(select_fn, clf, x, seg, deltas)
    seq_levels = dynamic_tau_sequential(select_fn, clf, x, seg, deltas, levels_fn=sel.select_levels)
    grid = np.asarray(TAU_GRID)
    for di, d in enumerate(deltas):
        ok = conf.numpy() >= d
        want = np.where(ok.any(1), grid[ok.argmax(1)], 1.0)
        np.testing.assert_array_equal(plain.tau[di], want)
    np.testing.assert_array_equal(fast.tau, plain.tau)
    np.testing.assert_array_equal(seq.tau, plain.tau)
    np.testing.assert_array_equal(seq_levels.tau, plain.tau)
    # skipping levels whose selection repeats the previous one changes the cost, not the result
    every = dynamic_tau_sequential(
        select_fn, clf, x, seg, deltas, levels_fn=sel.select_levels, skip_repeats=False
    )
    np.testing.assert_array_equal(every.tau, plain.tau)
    np.testing.assert_array_equal(every.confidence, seq_levels.confidence)
    assert every.classifier_rows == seq.classifier_rows
    assert seq_levels.classifier_rows < every.classifier_rows
    assert np.isin(fast.tau, grid).all() and len(np.unique(fast.tau)) > 1
    with pytest.raises(InputError, match="levels_fn"):
        dynamic_tau(select_fn, clf, x, seg, 0.9, levels_fn=lambda *a: torch.zeros(2, 2))
    with pytest.raises(InputError, match="levels_fn"):
        dynamic_tau_sequential(select_fn, clf, x, seg, 0.9, levels_fn=lambda *a: torch.zeros(2))


def test_bad_input_names_the_argument():
    sel, clf = nets()
    x = torch.rand(2, 3, 16, 16)
    seg = torch.zeros(2, 16, 16, dtype=torch.long)
    cases = [
        (lambda: sel(torch.rand(2, 3, 18, 16), torch.zeros(2)), "images"),
        (lambda: sel(torch.rand(2, 4, 16, 16), torch.zeros(2)), "images"),
        (lambda: sel(torch.rand(3, 16, 16), torch.zeros(2)), "images"),
        (lambda: sel(x, torch.zeros(3)), "tau"),
        (lambda: sel(x, torch.zeros(2, 1)), "tau"),
        (lambda: sel.select(x, seg[:, :8], torch.zeros(2)), "segments"),
        (lambda: sel.select_levels(x, seg, []), "taus"),
        (lambda: sel.heads(torch.rand(2, 5, 16, 16), torch.zeros(2)), "features"),
        (lambda: clf(torch.rand(2, 1, 16, 16)), "images"),
        (lambda: clf(torch.rand(2, 3, 12, 16)), "images"),
        (lambda: Selector(widths=(16,)), "widths"),
        (lambda: Classifier(0), "n_classes"),
        (lambda: masked_logits(clf, x, seg, torch.ones(2, 1), fill=[0.0, 1.0]), "fill"),
        (lambda: masked_logits(clf, x, seg[:1], torch.ones(2, 1)), "segments"),
        (lambda: masked_logits(None, x, seg, torch.ones(2, 1)), "classifier"),
    ]
    for call, arg in cases:
        with pytest.raises(InputError) as err:
            call()
        assert err.value.argument == arg, (arg, str(err.value))
        assert str(err.value).startswith(arg)
