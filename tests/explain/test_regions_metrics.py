"""Tests of trustlab.explain.regions.metrics against independent oracles (python loops over
pixels and regions, scikit-learn's average_precision_score, closed forms, a brute-force lattice
search and a per-image deletion/insertion loop)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.metrics import (  # noqa: E402
    PXAP_BINS,
    FidelityCurve,
    deletion_curve,
    insertion_curve,
    localisation_precision,
    mask_iou,
    pixel_grid_mask,
    pxap,
    pxap_per_image,
    random_area_masks,
)

torch.set_num_threads(1)


def random_segments(rng, n, h, w, k):
    """Label maps with labels drawn from 0..k-1 over blocks, so some labels can be absent."""
    blocks = rng.integers(0, k, size=(n, (h + 1) // 2, (w + 1) // 2))
    return np.repeat(np.repeat(blocks, 2, axis=1), 2, axis=2)[:, :h, :w].astype(np.int64)


# ---------------------------------------------------------------- localisation


def brute_precision_iou(m, t):
    prec, iou = [], []
    for a, b in zip(m, t, strict=True):
        inter = union = size = 0
        for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
            inter += x and y
            union += x or y
            size += x
        prec.append(inter / size if size else math.nan)
        iou.append(inter / union if union else math.nan)
    return np.array(prec), np.array(iou)


def test_precision_and_iou_match_pixel_loop():
    rng = np.random.default_rng(0)
    m = rng.random((12, 9, 7)) < rng.random((12, 1, 1))
    t = rng.random((12, 9, 7)) < 0.3
    m[3] = False  # empty mask: precision NaN, IoU defined
    m[4], t[4] = False, False  # both empty: both NaN
    m[5] = t[5]  # identical: 1, 1
    prec, iou = brute_precision_iou(m, t)
    np.testing.assert_allclose(localisation_precision(m, t), prec, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mask_iou(m, t), iou, rtol=0, atol=1e-15)
    assert np.isnan(localisation_precision(m, t)[[3, 4]]).all()
    assert not np.isnan(mask_iou(m, t)[3]) and np.isnan(mask_iou(m, t)[4])
    assert localisation_precision(m, t)[5] == 1.0 and mask_iou(m, t)[5] == 1.0
    # 0/1 integer and float input are the same masks
    np.testing.assert_array_equal(
        localisation_precision(m.astype(np.uint8), t.astype(float)), localisation_precision(m, t)
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), p=st.floats(0.05, 0.95), q=st.floats(0.05, 0.95))
def test_precision_iou_invariants(seed, p, q):
    rng = np.random.default_rng(seed)
    m = rng.random((3, 6, 5)) < p
    t = rng.random((3, 6, 5)) < q
    prec, iou = localisation_precision(m, t), mask_iou(m, t)
    ok = ~np.isnan(prec)
    assert ((prec[ok] >= 0) & (prec[ok] <= 1)).all()
    assert (iou[ok] <= prec[ok] + 1e-15).all()  # |I|/|U| <= |I|/|m|
    # a mask inside the truth has precision 1; the complement of the truth precision 0
    inside = m & t
    keep = inside.reshape(3, -1).any(1)
    assert (localisation_precision(inside, t)[keep] == 1).all()
    outside = ~t
    keep = outside.reshape(3, -1).any(1)
    assert (localisation_precision(outside, t)[keep] == 0).all()
    # IoU is symmetric, precision of the truth against a superset mask is 1
    np.testing.assert_array_equal(mask_iou(m, t), mask_iou(t, m))


# ---------------------------------------------------------------- PxAP


@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_pxap_exact_matches_sklearn(decimals):
    rng = np.random.default_rng(1)
    t = rng.random((5, 11, 13)) < 0.25
    s = np.clip(0.3 * t + rng.random(t.shape) * 0.8, 0, 1)
    if decimals is not None:  # many ties
        s = np.round(s, decimals)
    ref = average_precision_score(t.ravel(), s.ravel())
    assert abs(pxap(s, t) - ref) <= 1e-12
    per = pxap_per_image(s, t)
    ref_per = [average_precision_score(t[i].ravel(), s[i].ravel()) for i in range(5)]
    np.testing.assert_allclose(per, ref_per, rtol=0, atol=1e-12)


def test_pxap_binned_matches_sklearn_on_grid_and_threshold_loop():
    rng = np.random.default_rng(2)
    t = rng.random((4, 10, 10)) < 0.3
    s = np.clip(0.25 * t + 0.75 * rng.random(t.shape), 0, 1)
    s[0, 0, :3] = [0.0, 1.0, 0.5]  # the ends of [0, 1] and a grid point
    # sklearn on the scores rounded down to the grid
    for n_bins in (10, 1000, PXAP_BINS):
        ref = average_precision_score(t.ravel(), np.floor(s.ravel() * n_bins))
        assert abs(pxap(s, t, n_bins=n_bins) - ref) <= 1e-12
    # a loop over the thresholds j / 10 (predict s >= theta), precision at each recall step
    y, v = t.ravel(), s.ravel()
    ap, prev_recall = 0.0, 0.0
    for j in range(10, -1, -1):
        pred = v >= j / 10
        if not pred.any():
            continue
        tp = (pred & y).sum()
        recall = tp / y.sum()
        ap += (recall - prev_recall) * tp / pred.sum()
        prev_recall = recall
    assert abs(pxap(s, t, n_bins=10) - ap) <= 1e-12
    # the spec's 1e-5 bins: close to the exact value for continuous scores
    assert abs(pxap(s, t, n_bins=PXAP_BINS) - pxap(s, t)) < 1e-3
    # per image binned against sklearn
    ref_per = [average_precision_score(t[i].ravel(), np.floor(s[i].ravel() * 10)) for i in range(4)]
    np.testing.assert_allclose(pxap_per_image(s, t, n_bins=10), ref_per, rtol=0, atol=1e-12)


def test_pxap_closed_forms():
    t = np.zeros((2, 3, 3), dtype=bool)
    t[0, 0, 0] = t[1, 2, 2] = True
    perfect = t.astype(float)
    assert pxap(perfect, t) == 1.0
    # a constant map: AP = base rate
    assert pxap(np.full(t.shape, 0.5), t) == pytest.approx(2 / 18, abs=1e-15)
    # positives ranked last of 18 distinct scores: AP = (1/2)(1/17) + (1/2)(2/18)
    s = np.linspace(1, 0, 18).reshape(t.shape)
    order = np.argsort(-s.ravel())
    worst = np.zeros(18, dtype=bool)
    worst[order[-2:]] = True
    assert pxap(s, worst.reshape(t.shape)) == pytest.approx(0.5 / 17 + 0.5 * 2 / 18, abs=1e-15)
    per = pxap_per_image(perfect, np.stack([t[0], np.zeros((3, 3), bool)]))
    assert per[0] == 1.0 and np.isnan(per[1])


# ---------------------------------------------------------------- random area masks


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    k=st.integers(1, 12),
    target=st.lists(st.floats(0, 1), min_size=3, max_size=3),
)
def test_random_area_masks_closest_prefix(seed, k, target):
    rng = np.random.default_rng(seed)
    seg = random_segments(rng, 3, 9, 8, k)
    masks = random_area_masks(seg, np.array(target), random_state=seed)
    assert masks.shape == seg.shape and masks.dtype == bool
    for i in range(3):
        labels = np.unique(seg[i])
        sizes = {g: int((seg[i] == g).sum()) for g in labels}
        kept = set(np.unique(seg[i][masks[i]]).tolist())
        for g in labels:  # constant within every region
            vals = masks[i][seg[i] == g]
            assert vals.all() or not vals.any()
        area = sum(sizes[g] for g in kept)
        goal = target[i] * seg[i].size
        assert area == masks[i].sum()
        assert abs(area - goal) <= max(sizes.values()) / 2 + 1e-9  # within half a region
    # the oracle: same permutation stream, prefix areas enumerated by a loop
    rng2 = np.random.default_rng(seed)
    for i in range(3):
        order = rng2.permutation(np.unique(seg[i]))
        best, best_d, area = [], abs(0 - target[i] * seg[i].size), 0
        for j, g in enumerate(order):
            area += int((seg[i] == g).sum())
            d = abs(area - target[i] * seg[i].size)
            if d < best_d:
                best, best_d = list(order[: j + 1]), d
        np.testing.assert_array_equal(masks[i], np.isin(seg[i], best))


def test_random_area_masks_ends_seed_and_control_statistic():
    rng = np.random.default_rng(3)
    seg = random_segments(rng, 4, 10, 10, 9)
    assert not random_area_masks(seg, 0.0, random_state=0).any()
    assert random_area_masks(seg, 1.0, random_state=0).all()
    a = random_area_masks(seg, 0.4, random_state=5)
    np.testing.assert_array_equal(a, random_area_masks(seg, 0.4, random_state=5))
    assert not np.array_equal(a, random_area_masks(seg, 0.4, random_state=6))
    # check 5's control: a random region mask's precision is about the object-area fraction
    grid = np.arange(16).reshape(4, 4).repeat(4, 0).repeat(4, 1)  # 16 blocks of 4x4
    seg = np.broadcast_to(grid, (400, 16, 16))
    truth = np.zeros(seg.shape, dtype=bool)
    truth[:, 4:12, 4:12] = True  # object: 1/4 of the image
    prec = localisation_precision(random_area_masks(seg, 0.25, random_state=0), truth)
    assert abs(np.nanmean(prec) - 0.25) < 0.03


# ---------------------------------------------------------------- pixel grid


def lattice_count(h, w, p, k):
    """Kept pixels of {(i, j): (j + k i) mod p == 0}: the closed form per row."""
    return sum((w - 1 - ((-k * i) % p)) // p + 1 for i in range(h))


def maximin_shift(p):
    """The k maximising the smallest distance between lattice points, by enumerating points."""
    best_k, best_d = 0, -1
    for k in range(p):
        pts = [(i, j) for i in range(-p, p + 1) for j in range(-p, p + 1) if (j + k * i) % p == 0]
        d = min(i * i + j * j for i, j in pts if (i, j) != (0, 0))
        if d > best_d:
            best_k, best_d = k, d
    return best_k


@pytest.mark.parametrize("shape", [(7, 5), (6, 6), (9, 11), (12, 10)])
def test_pixel_grid_mask_is_the_closest_lattice(shape):
    h, w = shape
    jj, ii = np.meshgrid(np.arange(w), np.arange(h))
    family = []  # every lattice and complement with p <= W, counted by the closed form
    for p in range(1, w + 1):
        k = maximin_shift(p)
        c = lattice_count(h, w, p, k)
        family.append(c / (h * w))
        if p >= 2:
            family.append(1 - c / (h * w))
    for q in (0.05, 0.1, 0.2, 0.25, 0.3, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97, 1.0):
        m = pixel_grid_mask(shape, q)
        assert m.shape == shape and m.dtype == bool
        assert abs(m.mean() - q) <= min(abs(f - q) for f in family) + 1e-12
        # it is one of the family: a lattice L(p) with the maximin shift, or its complement
        found = False
        for p in range(1, 41):
            k = maximin_shift(p)
            lattice = (jj + k * ii) % p == 0
            if np.array_equal(m, lattice) or np.array_equal(m, ~lattice):
                found = True
                assert lattice.sum() == lattice_count(h, w, p, k)
                break
        assert found


def test_pixel_grid_mask_exact_fractions_and_evenness():
    for p in (2, 4, 5, 8, 10, 20):
        m = pixel_grid_mask((40, 40), 1 / p)
        assert m.sum() * p == 1600  # p divides W: exactly 1/p
    m = pixel_grid_mask((40, 40), 0.5)
    assert (m[:, :-1] != m[:, 1:]).all() and (m[:-1] != m[1:]).all()  # checkerboard
    m = pixel_grid_mask((40, 40), 0.2)
    pts = np.argwhere(m)
    d = ((pts[:, None] - pts[None]) ** 2).sum(-1)
    assert d[d > 0].min() == 5  # nearest kept pixels sqrt(5) apart (the 1/5 square lattice)
    assert pixel_grid_mask((3, 4), 1.0).all()
    assert pixel_grid_mask((40, 40), 0.8).mean() == 0.8


# ---------------------------------------------------------------- deletion / insertion


def small_net(channels=3, classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(6, channels, 3, 3, generator=g, dtype=torch.float64)
    w2 = torch.randn(classes, 6, generator=g, dtype=torch.float64)

    def classify(x):
        h = torch.relu(torch.nn.functional.conv2d(x.double(), w1, padding=1))
        return h.mean((2, 3)) @ w2.T

    return classify


def brute_curve(kind, classify, x, seg, scores, levels, fill, perms=None):
    """Per image and level: build the mask region by region, classify one image at a time."""
    n, c, h, w = x.shape
    out_agree = np.zeros((n, len(levels)), dtype=bool)
    out_area = np.zeros((n, len(levels)))
    for i in range(n):
        labels = sorted(set(seg[i].ravel().tolist()))
        if perms is not None:
            ranking = list(perms[i])
        else:  # descending score, ties by lower label: sort by (-score, label)
            ranking = sorted(labels, key=lambda g: (-scores[i][g], g))
        removal = ranking if kind == "deletion" else ranking[::-1]
        ref = int(np.argmax(classify(torch.as_tensor(x[i : i + 1])).numpy()))
        for j, t in enumerate(levels):
            gone, removed = 0, []
            for g in [None, *removal]:
                if g is not None:
                    removed.append(g)
                    gone += int((seg[i] == g).sum())
                done = gone / (h * w) >= t if kind == "deletion" else (h * w - gone) / (h * w) <= t
                if done:
                    break
            img = x[i].copy()
            for ch in range(c):
                for a in range(h):
                    for b in range(w):
                        if seg[i, a, b] in removed:
                            img[ch, a, b] = fill[ch]
            pred = int(np.argmax(classify(torch.as_tensor(img[None])).numpy()))
            out_agree[i, j] = pred == ref
            out_area[i, j] = gone / (h * w)
    return out_agree, out_area


@pytest.mark.parametrize("kind", ["deletion", "insertion"])
def test_curves_match_brute_force_loop(kind):
    rng = np.random.default_rng(4)
    n, h, w = 6, 8, 10
    x = rng.normal(size=(n, 3, h, w))
    seg = random_segments(rng, n, h, w, 9)
    scores = np.round(rng.random((n, 11)), 1)  # ties; labels 9, 10 never present
    scores[:, 9:] = np.nan
    for i in range(n):  # absent labels get NaN: they must be ignored
        scores[i, ~np.isin(np.arange(11), seg[i])] = np.nan
    fill = np.array([-1.0, 0.5, 2.0])
    levels = (0.05, 0.1, 0.2, 0.5, 1.0) if kind == "deletion" else (0.8, 0.9, 0.95, 0.3, 1.0)
    classify = small_net()
    fn = deletion_curve if kind == "deletion" else insertion_curve
    r = fn(classify, x, seg, scores, levels, fill=fill, chunk_size=4)
    agree, area = brute_curve(kind, classify, x, seg, scores, levels, fill)
    assert isinstance(r, FidelityCurve) and r.kind == kind and r.order == "importance"
    np.testing.assert_array_equal(r.agrees, agree)
    np.testing.assert_allclose(r.removed_area, area, rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.agreement, agree.mean(0), rtol=0, atol=1e-15)
    assert r.fractions == levels and r.classifier_rows == n + n * len(levels)
    # torch input, other chunking: the same curve
    r2 = fn(classify, torch.as_tensor(x), torch.as_tensor(seg), scores, levels, fill=fill)
    np.testing.assert_array_equal(r2.agrees, r.agrees)
    np.testing.assert_array_equal(r2.prediction, r.prediction)


def test_random_order_matches_brute_force_with_same_stream():
    rng = np.random.default_rng(5)
    n, h, w = 5, 6, 6
    x = rng.normal(size=(n, 3, h, w))
    seg = random_segments(rng, n, h, w, 7)
    classify = small_net(seed=1)
    levels = (0.1, 0.3, 0.6)
    for kind, fn in (("deletion", deletion_curve), ("insertion", insertion_curve)):
        r = fn(classify, x, seg, None, levels, order="random", random_state=11)
        stream = np.random.default_rng(11)
        perms = [stream.permutation(np.unique(seg[i])) for i in range(n)]
        agree, area = brute_curve(kind, classify, x, seg, None, levels, [0.0] * 3, perms)
        np.testing.assert_array_equal(r.agrees, agree)
        np.testing.assert_allclose(r.removed_area, area, rtol=0, atol=1e-15)
        assert r.order == "random"


def one_region_setup(n=32, rank_of_region=0):
    """16x16 images cut into 16 blocks of 4x4; the classifier says 1 iff block 5 is not blacked
    out (it reads only that block). Block 5 has importance rank ``rank_of_region``."""
    grid = np.arange(16).reshape(4, 4).repeat(4, 0).repeat(4, 1)
    seg = np.broadcast_to(grid, (n, 16, 16)).copy()
    x = np.ones((n, 1, 16, 16))

    def classify(z):
        v = z[:, 0, 4:8, 4:8].mean((1, 2))  # block 5 = rows 4-7, columns 4-7
        return torch.stack([torch.full_like(v, 0.5), v], 1)

    rng = np.random.default_rng(6)
    scores = np.empty((n, 16))
    for i in range(n):
        others = rng.permutation([g for g in range(16) if g != 5])
        ranking = np.insert(others, rank_of_region, 5)  # most important first
        scores[i, ranking] = np.linspace(1, 0, 16)
    return classify, x, seg, scores


def test_deleting_the_region_the_classifier_reads_flips_at_the_right_fraction():
    classify, x, seg, scores = one_region_setup(rank_of_region=2)  # third most important
    # each block is 1/16 = 0.0625; block 5 goes with the third block, at removed area 0.1875
    r = deletion_curve(classify, x, seg, scores, (0.1, 0.125, 0.13, 0.1875, 0.2))
    np.testing.assert_array_equal(r.agreement, [1, 1, 0, 0, 0])
    np.testing.assert_allclose(r.mean_removed_area, [0.125, 0.125, 0.1875, 0.1875, 0.25])
    assert (r.reference == 1).all()
    # insertion removes the 13 less important blocks first (kept 3/16), block 5 is the 14th
    r = insertion_curve(classify, x, seg, scores, (0.95, 0.1875, 0.18, 0.125))
    np.testing.assert_array_equal(r.agreement, [1, 1, 0, 0])
    np.testing.assert_allclose(r.mean_removed_area, [0.0625, 0.8125, 0.875, 0.875])


def test_random_order_control_differs_from_importance_order():
    classify, x, seg, scores = one_region_setup(n=64, rank_of_region=0)
    imp = deletion_curve(classify, x, seg, scores, (0.0625, 0.2))
    rnd = deletion_curve(classify, x, seg, scores, (0.0625, 0.2), order="random", random_state=0)
    np.testing.assert_array_equal(imp.agreement, [0, 0])
    # a random 1/16 (4/16) of the blocks hits block 5 with probability 1/16 (4/16)
    assert rnd.agreement[0] > 0.8 and rnd.agreement[1] > 0.6
    assert imp.agreement[1] <= rnd.agreement[1] - 0.2  # check 6's criterion
    ins = insertion_curve(classify, x, seg, scores, (0.0625,))
    ins_rnd = insertion_curve(classify, x, seg, None, (0.0625,), order="random", random_state=0)
    assert ins.agreement[0] == 1 and ins_rnd.agreement[0] < 0.3


def test_result_summary_dict_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    classify, x, seg, scores = one_region_setup(n=4, rank_of_region=2)
    r = deletion_curve(classify, x, seg, scores)
    d = r.to_dict()
    assert d["kind"] == "deletion" and d["fractions"] == [0.05, 0.1, 0.2]
    assert d["agreement"] == [1.0, 1.0, 0.0] and "removed_area" not in d
    assert "Deletion fidelity" in r.summary() and "removed area 0.2" in r.summary()
    assert r.plot() is not None
    with pytest.raises(AttributeError):
        r.kind = "insertion"  # frozen


# ---------------------------------------------------------------- bad input


def test_bad_input_masks_and_maps():
    m = np.zeros((2, 3, 3), dtype=bool)
    with pytest.raises(InputError, match="truth"):
        localisation_precision(m, np.zeros((2, 3, 4), dtype=bool))
    with pytest.raises(InputError, match="masks"):
        mask_iou(np.zeros((3, 3), dtype=bool), np.zeros((3, 3), dtype=bool))
    with pytest.raises(InputError, match="masks"):
        localisation_precision(np.full((2, 3, 3), 0.5), m)
    t = m.copy()
    t[0, 0, 0] = True
    with pytest.raises(InputError, match="soft_maps"):
        pxap(np.full((2, 3, 3), 1.5), t)
    with pytest.raises(InputError, match="soft_maps"):
        pxap(np.full((2, 3, 3), np.nan), t)
    with pytest.raises(InputError, match="truth"):
        pxap(np.zeros((2, 3, 3)), m)  # no positive pixel
    with pytest.raises(InputError, match="n_bins"):
        pxap(np.zeros((2, 3, 3)), t, n_bins=0)
    seg = np.zeros((2, 3, 3), dtype=int)
    with pytest.raises(InputError, match="kept_fraction"):
        random_area_masks(seg, [0.5, 0.5, 0.5])
    with pytest.raises(InputError, match="kept_fraction"):
        random_area_masks(seg, 1.5)
    with pytest.raises(InputError, match="segments"):
        random_area_masks(seg.astype(float), 0.5)
    with pytest.raises(InputError, match="segments"):
        random_area_masks(seg - 1, 0.5)
    for q in (0, -0.1, 1.1, float("nan")):
        with pytest.raises(InputError, match="kept_fraction"):
            pixel_grid_mask((4, 4), q)
    for shape in ((4,), (0, 4), (4.5, 4), "ab"):
        with pytest.raises(InputError, match="shape"):
            pixel_grid_mask(shape, 0.5)


def test_bad_input_curves():
    classify, x, seg, scores = one_region_setup(n=3)
    with pytest.raises(InputError, match="segments"):
        deletion_curve(classify, x, seg[:, :, :8], scores)
    with pytest.raises(InputError, match="segments"):
        deletion_curve(classify, x, seg[:2], scores)
    with pytest.raises(InputError, match="images"):
        deletion_curve(classify, x[:, 0], seg, scores)
    with pytest.raises(InputError, match="images"):
        deletion_curve(classify, x.astype(int), seg, scores)
    for bad in ((0.0, 0.1), (0.1, 1.5), (-0.2,), (), (float("nan"),)):
        with pytest.raises(InputError, match="fractions"):
            deletion_curve(classify, x, seg, scores, bad)
        with pytest.raises(InputError, match="kept"):
            insertion_curve(classify, x, seg, scores, bad)
    with pytest.raises(InputError, match="scores"):
        deletion_curve(classify, x, seg, scores[:2])
    with pytest.raises(InputError, match="scores"):
        deletion_curve(classify, x, seg, scores[:, :15])  # fewer than the 16 labels
    with pytest.raises(InputError, match="scores"):
        deletion_curve(classify, x, seg, scores[:, 0])
    with pytest.raises(InputError, match="scores"):
        deletion_curve(classify, x, seg, None)
    nan_scores = scores.copy()
    nan_scores[0, 3] = np.nan  # a present region
    with pytest.raises(InputError, match="scores"):
        deletion_curve(classify, x, seg, nan_scores)
    with pytest.raises(InputError, match="order"):
        deletion_curve(classify, x, seg, scores, order="reverse")
    with pytest.raises(InputError, match="classify_fn"):
        deletion_curve(lambda z: torch.zeros(len(z)), x, seg, scores)
    with pytest.raises(InputError, match="classify_fn"):
        deletion_curve("not callable", x, seg, scores)
    with pytest.raises(InputError, match="chunk_size"):
        deletion_curve(classify, x, seg, scores, chunk_size=0)
