"""Tests of trustlab.watermark.synth (the WMarkGPT-recipe generator) against independent oracles:
the recipe's closed forms (the brightness shift, the score 5 - 20w), scikit-image's PSNR,
brute-force loops over pixels and boxes, numpy second moments for the orientation, and the
watermark libraries' own decoders for the invisible marks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from trustlab.errors import InputError
from trustlab.watermark.marks import (
    blend,
    principal_angle,
    relation_of_boxes,
    score_of_psnr,
    trimmed_box,
)
from trustlab.watermark.synth import KINDS, WatermarkDataset, load_watermark_dataset, synthesize
from trustlab.watermark.vocabulary import CELLS, RELATIONS, level_of_score, orientation_of_mask


def _spearman_job(n: int, seed: int) -> dict:
    """200 logo/text/pattern images: their opacity, stored PSNR and scikit-image's PSNR."""
    from skimage.metrics import peak_signal_noise_ratio

    ds = synthesize(n, random_state=seed)
    ref = [
        math.inf if np.array_equal(c, x) else float(peak_signal_noise_ratio(c, x, data_range=255))
        for c, x in zip(ds.covers, ds.images, strict=True)
    ]
    return {
        "opacity": ds.opacity.tolist(),
        "psnr": ds.psnr.tolist(),
        "psnr_skimage": ref,
        "scores": ds.scores.tolist(),
        "levels": list(ds.levels),
    }


BACKGROUND_JOBS = {"wmark-synth-200": (_spearman_job, {"n": 200, "seed": 11})}


@pytest.fixture(scope="module")
def ds() -> WatermarkDataset:
    return synthesize(24, random_state=3, opacity_range=(0.02, 0.25))


def stub(facts, random_state=None):
    rng = np.random.default_rng(random_state)
    return f"A {facts.content_type} mark #{int(rng.integers(100))}. The watermark visibility is: {facts.level}."


# ------------------------------------------------------------------------------ determinism


def test_same_seed_same_arrays_and_prefix_stable():
    a = synthesize(3, random_state=7)
    b = synthesize(3, random_state=7)
    for name in ("images", "covers", "masks", "marks", "object_masks", "opacity", "boxes"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.levels == b.levels and a.relations == b.relations
    # per-image seeds: the first images do not depend on n
    c = synthesize(2, random_state=7)
    np.testing.assert_array_equal(c.images, a.images[:2])
    d = synthesize(2, random_state=8)
    assert not np.array_equal(d.images, a.images[:2])
    # a Generator seeds the same way as the int it draws
    e = synthesize(1, random_state=np.random.default_rng(5))
    assert e.images.shape == (1, 256, 256, 3)


def test_images_are_the_same_for_any_n_jobs():
    """Generated in two processes, in chunks, the dataset equals the one-process one field by
    field (each image has its own seed); progress reaches n."""
    import dataclasses

    kw = {"random_state": 11, "kinds": ("logo", "text", "dwtDctSvd", "blind"),
          "clean_fraction": 0.2}  # fmt: skip
    calls = []
    a = synthesize(9, **kw)
    b = synthesize(9, n_jobs=2, progress=lambda d, t: calls.append((d, t)), **kw)
    assert calls[-1] == (9, 9) and len(calls) > 1
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "payloads":
            assert [None if p is None else p.tolist() for p in x] == [
                None if p is None else p.tolist() for p in y]  # fmt: skip
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


# ------------------------------------------------------------------------------ the blend


def _blend_oracle(cover, mark, mask, w):
    """The recipe written out pixel by pixel (python floats)."""
    h, wd, _ = cover.shape
    vals = [[[float(cover[y, x, ch]) for ch in range(3)] for x in range(wd)] for y in range(h)]
    for y in range(h):
        for x in range(wd):
            if mask[y, x]:
                for ch in range(3):
                    vals[y][x][ch] = (1 - w) * float(cover[y, x, ch]) + w * float(mark[y, x, ch])
    total_cover = float(cover.astype(np.float64).sum())
    total = sum(v for row in vals for px in row for v in px)
    shift = (total_cover - total) / cover.size
    out = np.clip(np.array(vals) + shift, 0, 255)
    return out, shift


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    w=st.integers(0, 25).map(lambda k: k / 100),
    h=st.integers(2, 7),
    wd=st.integers(2, 7),
)
def test_blend_matches_pixel_loop(seed, w, h, wd):
    rng = np.random.default_rng(seed)
    cover = rng.integers(0, 256, (h, wd, 3), dtype=np.uint8)
    mark = rng.integers(0, 256, (h, wd, 3), dtype=np.uint8)
    mask = rng.random((h, wd)) < 0.4
    got, shift = blend(cover, mark, mask, w)
    want, want_shift = _blend_oracle(cover, mark, mask, w)
    assert shift == pytest.approx(want_shift, abs=1e-9)
    tie = np.abs(want - np.floor(want) - 0.5) < 1e-9  # float noise decides these roundings
    np.testing.assert_array_equal(got[~tie], np.rint(want[~tie]))
    assert np.all(np.abs(got[tie] - want[tie]) <= 0.5 + 1e-9)


def test_dataset_outside_mask_differs_by_one_constant(ds):
    checked = 0
    for i in range(len(ds)):
        w, shift = ds.opacity[i], ds.shifts[i]
        cover = ds.covers[i].astype(np.float64)
        mask = ds.masks[i]
        # closed form of the shift: minus the mean change the blend made
        change = w * (ds.marks[i][mask].astype(np.float64) - cover[mask]).sum()
        assert shift == pytest.approx(-change / cover.size, abs=1e-9)
        outside = ~mask[..., None] & (cover + shift >= 0.5) & (cover + shift <= 254.5)
        diff = (ds.images[i].astype(np.int64) - ds.covers[i].astype(np.int64))[
            np.broadcast_to(outside, cover.shape)
        ]
        assert np.unique(diff).tolist() == [int(np.rint(shift))]
        # inside: (1 - w) cover + w mark + shift, clipped and rounded
        inside = (1 - w) * cover[mask] + w * ds.marks[i][mask] + shift
        np.testing.assert_array_equal(ds.images[i][mask], np.rint(np.clip(inside, 0, 255)))
        checked += 1
    assert checked == len(ds)


def test_levels_scores_and_opacity_grid(ds):
    w = ds.opacity
    assert np.all((w >= 0.02 - 1e-12) & (w <= 0.25 + 1e-12))
    np.testing.assert_allclose(w * 100, np.round(w * 100), atol=1e-9)
    for i in range(len(ds)):
        assert ds.scores[i] == 5 - 20 * w[i]
        assert ds.levels[i] == level_of_score(5 - 20 * w[i])
    assert set(ds.kinds) <= {"logo", "text", "pattern"}
    assert ds.content_types == ds.kinds


# ------------------------------------------------------------------------------ geometry


def _brute_trimmed_box(mask, trim=0.05):
    pts = [(y, x) for y in range(mask.shape[0]) for x in range(mask.shape[1]) if mask[y, x]]
    cy = sum(p[0] for p in pts) / len(pts)
    cx = sum(p[1] for p in pts) / len(pts)
    ranked = sorted(range(len(pts)), key=lambda j: (math.hypot(pts[j][0] - cy, pts[j][1] - cx), j))
    k = math.floor(trim * len(pts))
    keep = [pts[j] for j in ranked[k : len(pts) - k]] or pts
    return (
        min(p[1] for p in keep),
        min(p[0] for p in keep),
        max(p[1] for p in keep) + 1,
        max(p[0] for p in keep) + 1,
    )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), p=st.floats(0.05, 0.9))
def test_trimmed_box_matches_brute_force(seed, p):
    mask = np.random.default_rng(seed).random((9, 11)) < p
    if not mask.any():
        mask[4, 5] = True
    assert trimmed_box(mask) == _brute_trimmed_box(mask)
    ys, xs = np.nonzero(mask)
    assert trimmed_box(mask, trim=0.0) == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)


def _moment_angle(mask):
    """Angle (degrees from the horizontal, in [0, 90]) of the covariance's main eigenvector."""
    ys, xs = np.nonzero(mask)
    cov = np.cov(np.vstack([xs, ys]).astype(np.float64), bias=True)
    vals, vecs = np.linalg.eigh(cov)
    vx, vy = vecs[:, -1]
    return math.degrees(math.atan2(abs(vy), abs(vx))), vals[0] / vals[-1]


def _expected_bin(angle):
    return "horizontal" if angle < 22.5 else ("vertical" if angle > 67.5 else "diagonal")


def test_principal_angle_hand_made_masks():
    from skimage.draw import disk, line

    m = np.zeros((64, 64), bool)
    m[30:34, 4:60] = True
    assert principal_angle(m) == 0.0 and principal_angle(m.T) == 90.0
    d = np.zeros((64, 64), bool)
    for off in range(3):
        rr, cc = line(5 + off, 5, 58 + off, 58)
        d[rr, cc] = True
    assert principal_angle(d) == pytest.approx(45.0, abs=1.0)
    assert principal_angle(d[:, ::-1]) == pytest.approx(45.0, abs=1.0)
    c = np.zeros((64, 64), bool)
    c[disk((32, 32), 20)] = True
    assert math.isnan(principal_angle(c))  # isotropic: no principal axis


@settings(max_examples=30, deadline=None)
@given(theta=st.floats(0, 179.9), length=st.integers(20, 50), width=st.integers(3, 8))
def test_principal_angle_matches_second_moments(theta, length, width):
    from skimage.draw import polygon

    t = math.radians(theta)
    u = np.array([math.cos(t), -math.sin(t)])  # image y points down
    v = np.array([math.sin(t), math.cos(t)])
    c = np.array([40.0, 40.0])
    corners = [
        c + a * u * length / 2 + b * v * width / 2 for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]
    m = np.zeros((80, 80), bool)
    rr, cc = polygon([p[1] for p in corners], [p[0] for p in corners], m.shape)
    m[rr, cc] = True
    angle, _ = _moment_angle(m)
    assert principal_angle(m) == pytest.approx(angle, abs=1e-6)
    if min(abs(angle - 22.5), abs(angle - 67.5)) > 1e-6:
        assert orientation_of_mask(m) == _expected_bin(angle)


def _brute_relation(wb, ob, margin):
    grid_w = np.zeros((300, 300), bool)
    grid_o = np.zeros((300, 300), bool)
    grid_w[wb[1] : wb[3], wb[0] : wb[2]] = True
    grid_o[ob[1] : ob[3], ob[0] : ob[2]] = True
    inter = int((grid_w & grid_o).sum())
    if inter >= 0.9 * grid_w.sum():
        return "inside"
    if inter > 0:
        return "partially overlapping"
    # gap = empty pixels between the boxes; pixel centres are gap + 1 apart (Chebyshev), so the
    # object box grown by margin + 1 pixels touches the watermark box when the gap is <= margin
    g = margin + 1
    near = np.zeros_like(grid_o)
    near[max(ob[1] - g, 0) : ob[3] + g, max(ob[0] - g, 0) : ob[2] + g] = True
    return "near the edge" if (near & grid_w).any() else "separate"


box_st = st.tuples(st.integers(0, 200), st.integers(0, 200), st.integers(1, 80), st.integers(1, 80))


@settings(max_examples=40, deadline=None)
@given(a=box_st, b=box_st, margin=st.integers(0, 10))
def test_relation_matches_pixel_grid(a, b, margin):
    wb = (a[0], a[1], a[0] + a[2], a[1] + a[3])
    ob = (b[0], b[1], b[0] + b[2], b[1] + b[3])
    assert relation_of_boxes(wb, ob, margin=margin) == _brute_relation(wb, ob, margin)


def test_relation_hand_cases():
    assert relation_of_boxes((10, 10, 20, 20), (0, 0, 100, 100), margin=5) == "inside"
    assert relation_of_boxes((0, 0, 20, 20), (10, 10, 40, 40), margin=5) == "partially overlapping"
    assert relation_of_boxes((0, 0, 10, 10), (14, 0, 30, 10), margin=5) == "near the edge"
    assert relation_of_boxes((0, 0, 10, 10), (16, 0, 30, 10), margin=5) == "separate"


def test_structured_block_matches_brute_force(ds):
    size = ds.size
    for i in range(len(ds)):
        mask = ds.masks[i]
        box = tuple(int(v) for v in ds.boxes[i])
        assert box == trimmed_box(mask)
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        cell = CELLS[3 * min(int(cy // (size / 3)), 2) + min(int(cx // (size / 3)), 2)]
        assert ds.cells[i] == cell
        angle, ratio = _moment_angle(mask)
        if ratio < 0.9:  # a principal axis exists
            assert ds.angles[i] == pytest.approx(angle, abs=1e-6)
        assert ds.orientations[i] == orientation_of_mask(mask)
        assert len(ds.relations[i]) == len(ds.objects[i])
        for (name, rel), (oname, obox) in zip(ds.relations[i], ds.objects[i], strict=True):
            assert name == oname and rel in RELATIONS
            assert rel == _brute_relation(box, obox, int(size / 32))
        union = ds.object_masks[i]
        want = (mask & union).sum() / union.sum() if union.any() else 0.0
        assert ds.coverage[i] == pytest.approx(want, abs=1e-12)
        if ds.objects[i]:
            for _, obox in ds.objects[i]:
                assert union[obox[1] : obox[3], obox[0] : obox[2]].any()
        assert ds.objects_known[i] == ds.sources[i].startswith("scene/")


def test_facts_carry_the_ground_truth(ds):
    f = ds.facts(5)
    assert f.present and f.level == ds.levels[5] and f.cell == ds.cells[5]
    assert f.opacity == ds.opacity[5] and f.score == ds.scores[5]
    assert [(r.name, r.relation) for r in f.relations] == list(ds.relations[5])
    with pytest.raises(InputError, match="i"):
        ds.facts(len(ds))


def test_clean_images_are_the_covers():
    ds = synthesize(3, random_state=2, clean_fraction=1.0)
    np.testing.assert_array_equal(ds.images, ds.covers)
    assert not ds.present.any() and not ds.masks.any()
    assert ds.kinds == ("clean",) * 3 and ds.levels == ("invisible",) * 3
    assert ds.facts(0).present is False


def test_progress_and_subset_and_summary():
    calls = []
    ds = synthesize(3, random_state=4, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    sub = ds.subset([2, 0])
    np.testing.assert_array_equal(sub.images, ds.images[[2, 0]])
    assert sub.levels == (ds.levels[2], ds.levels[0])
    assert "3 images" in ds.summary()
    assert ds.to_dict()["n_images"] == 3


# ------------------------------------------------------------------------------ records and files


def test_records_follow_wmarkgpt_format(ds):
    recs = ds.records(describer=stub, random_state=1)
    assert len(recs) == len(ds)
    for i, r in enumerate(recs):
        assert list(r)[:5] == ["image", "id", "gt_score", "visibility", "conversations"]
        assert r["image"] == r["id"] == f"{i:05d}.png"
        assert r["visibility"] == ds.levels[i] and r["gt_score"] == pytest.approx(ds.scores[i])
        human, gpt = r["conversations"]
        assert human["from"] == "human" and human["value"].startswith("<|image|>")
        assert gpt["from"] == "gpt"
        assert gpt["value"].endswith(f"The watermark visibility is: {ds.levels[i]}.")
        assert r["structured"]["cell"] == ds.cells[i]
    json.dumps(recs)
    assert ds.records(describer=stub, random_state=1) == recs
    assert ds.records(describer=stub, random_state=2) != recs


def test_records_reject_a_bad_describer(ds):
    with pytest.raises(InputError, match="describer"):
        ds.records(describer=lambda facts, random_state=None: "no final sentence")
    with pytest.raises(InputError, match="describer"):
        ds.records(describer="nope")


def test_save_load_round_trip(tmp_path):
    ds = synthesize(3, random_state=9, clean_fraction=0.3)
    ds.save(tmp_path)
    assert sorted(p.name for p in (tmp_path / "images").iterdir()) == [
        "00000.png",
        "00001.png",
        "00002.png",
    ]
    back = load_watermark_dataset(tmp_path)
    for name in ("images", "covers", "masks", "marks", "object_masks", "boxes", "present"):
        np.testing.assert_array_equal(getattr(back, name), getattr(ds, name))
    for name in ("opacity", "scores", "psnr", "shifts", "coverage", "angles", "ssim"):
        np.testing.assert_allclose(getattr(back, name), getattr(ds, name), rtol=1e-12)
    for name in ("kinds", "levels", "cells", "orientations", "relations", "objects"):
        assert getattr(back, name) == getattr(ds, name)
    assert back.records(describer=stub) == ds.records(describer=stub)
    with pytest.raises(InputError, match="path"):
        load_watermark_dataset(tmp_path / "images")


def test_plot_draws():
    import matplotlib.pyplot as plt

    ds = synthesize(2, random_state=0)
    ax = ds.plot()
    assert ax.images
    plt.close("all")


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n": 0}, "n"),
        ({"n": 2.5}, "n"),
        ({"n": 1, "kinds": ("logo", "hologram")}, "kinds"),
        ({"n": 1, "kinds": ()}, "kinds"),
        ({"n": 1, "opacity_range": (0.0, 0.3)}, "opacity_range"),
        ({"n": 1, "opacity_range": (-0.1, 0.1)}, "opacity_range"),
        ({"n": 1, "opacity_range": (0.2, 0.1)}, "opacity_range"),
        ({"n": 1, "size": 128}, "size"),
        ({"n": 1, "clean_fraction": 1.5}, "clean_fraction"),
        ({"n": 1, "random_state": -1}, "random_state"),
        ({"n": 1, "progress": 3}, "progress"),
        ({"n": 1, "kinds": ("dwtDctSvd",), "strengths": {"dwtDctSvd": -1}}, "strengths"),
        ({"n": 1, "strengths": {"nope": 1}}, "strengths"),
        ({"n": 1, "n_jobs": 0}, "n_jobs"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name):
    n = kwargs.pop("n")
    with pytest.raises(InputError, match=name):
        synthesize(n, **kwargs)


def test_bad_input_of_helpers():
    cover = np.zeros((4, 4, 3), np.uint8)
    mask = np.zeros((4, 4), bool)
    with pytest.raises(InputError, match="opacity"):
        blend(cover, cover, mask, 0.3)
    with pytest.raises(InputError, match="mask"):
        blend(cover, cover, mask.astype(int), 0.1)
    with pytest.raises(InputError, match="mask"):
        trimmed_box(mask)
    with pytest.raises(InputError, match="object_box"):
        relation_of_boxes((0, 0, 2, 2), (3, 3, 3, 9), margin=1)
    assert set(KINDS) >= {"logo", "text", "pattern", "dwtDctSvd", "rivaGan", "blind"}
    assert score_of_psnr(35.0) == 4.0 and score_of_psnr(10.0) == 0.0
    assert level_of_score(score_of_psnr(29.9)) == "moderate"


# ------------------------------------------------------------------------------ invisible marks


def _via_png(image):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG")
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))


def _library_decode(kind, rgb, strength, n_bits):
    """Each library's own decoder, called directly (BGR images, as they expect)."""
    bgr = np.ascontiguousarray(rgb[..., ::-1])
    if kind == "blind":
        from trustlab.watermark.marks import _blind_watermark

        bw = _blind_watermark()
        wm = bw.WaterMark(password_wm=1, password_img=1)
        wm.bwm_core.d1, wm.bwm_core.d2 = strength, strength * 20 / 36
        return np.asarray(wm.extract(embed_img=bgr.astype(np.float32), wm_shape=n_bits, mode="bit"))
    from imwatermark import WatermarkDecoder

    dec = WatermarkDecoder("bits", n_bits)
    if kind == "rivaGan":
        WatermarkDecoder.loadModel()
        return np.asarray(dec.decode(bgr, "rivaGan"))
    return np.asarray(dec.decode(bgr, kind, scales=[0, strength, 0]))


INVISIBLE_CASES = (("dwtDctSvd", 36.0, 2), ("blind", 36.0, 1), ("rivaGan", 1.0, 2))


def _invisible_job(cases, seed: int) -> dict:
    """Per default-strength case: each image's facts and the library decoder's bit accuracy on
    the image written to and read back from PNG."""
    out = {}
    for kind, strength, n in cases:
        ds = synthesize(n, random_state=seed, kinds=(kind,), strengths={kind: (strength,)})
        rows = []
        for i in range(n):
            bits = _library_decode(kind, _via_png(ds.images[i]), strength, ds.payloads[i].size)
            rows.append(
                {
                    "kind": ds.kinds[i],
                    "content_type": ds.content_types[i],
                    "strength": float(ds.strength[i]),
                    "opacity_nan": bool(np.isnan(ds.opacity[i])),
                    "n_bits": int(ds.payloads[i].size),
                    "accuracy": float(np.mean(bits.astype(bool) == ds.payloads[i])),
                    "scene": ds.sources[i].startswith("scene/"),
                    "mask_none": not ds.masks[i].any(),
                    "box": [int(v) for v in ds.boxes[i]],
                    "psnr": float(ds.psnr[i]),
                    "score": float(ds.scores[i]),
                    "level": ds.levels[i],
                    "changed": not np.array_equal(ds.images[i], ds.covers[i]),
                }
            )
        out[kind] = rows
    return out


# the invisible marks' job first: its tests come before the 200-image one
BACKGROUND_JOBS = {
    "wmark-invisible": (_invisible_job, {"cases": INVISIBLE_CASES, "seed": 21}),
    **BACKGROUND_JOBS,
}


@pytest.fixture(scope="module")
def invisible(background):
    pytest.importorskip("imwatermark")
    return background.result("wmark-invisible", BACKGROUND_JOBS["wmark-invisible"])


@pytest.mark.parametrize("case", INVISIBLE_CASES, ids=[c[0] for c in INVISIBLE_CASES])
def test_library_decoders_recover_the_payload(invisible, case):
    """Exact on PNG at default strength; RivaGAN (learned) only on photo covers: on composed
    scenes with flat textures it misses bits now and then (seed 21: 8 of 12 images exact,
    the worst 25/32), so there it must get at least 3/4 of the bits."""
    kind, strength, n = case
    rows = invisible[kind]
    assert len(rows) == n
    for r in rows:
        assert r["kind"] == kind and r["content_type"] == "invisible"
        assert r["strength"] == strength and r["opacity_nan"] and r["n_bits"] == 32
        if kind == "rivaGan" and r["scene"]:
            assert r["accuracy"] >= 0.75
        else:
            assert r["accuracy"] == 1.0
        assert r["mask_none"] and r["box"] == [0, 0, 256, 256] and r["changed"]
        assert r["score"] == score_of_psnr(r["psnr"])
        assert r["level"] == level_of_score(score_of_psnr(r["psnr"]))


@pytest.mark.xfail(
    strict=True, reason="invisible-watermark 0.2.0 dwtDct decoding bug (upstream #2, #39, PR #43)"
)
def test_dwtdct_decoding_is_unreliable():
    pytest.importorskip("imwatermark")
    ds = synthesize(2, random_state=21, kinds=("dwtDct",), strengths={"dwtDct": (36.0,)})
    accuracy = [
        np.mean(_library_decode("dwtDct", _via_png(x), 36.0, 32).astype(bool) == p)
        for x, p in zip(ds.images, ds.payloads, strict=True)
    ]
    assert min(accuracy) == 1.0


def test_dwtdctsvd_strength_sweep_lowers_psnr():
    pytest.importorskip("imwatermark")
    psnr = [
        synthesize(1, random_state=5, kinds=("dwtDctSvd",), strengths={"dwtDctSvd": (s,)}).psnr[0]
        for s in (36.0, 150.0, 300.0)
    ]
    assert psnr[0] > psnr[1] > psnr[2]


def test_spearman_opacity_psnr_over_200(background):
    r = background.result("wmark-synth-200", BACKGROUND_JOBS["wmark-synth-200"])
    np.testing.assert_allclose(r["psnr"], r["psnr_skimage"], rtol=1e-12)
    rho = spearmanr(r["opacity"], r["psnr_skimage"]).statistic
    assert rho <= -0.95
    assert [level_of_score(5 - 20 * w) for w in r["opacity"]] == r["levels"]
    assert len(set(r["levels"])) == 5  # every level occurs
