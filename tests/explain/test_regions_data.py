"""BAM-lite data and superpixels (trustlab.explain.regions.data)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

pytest.importorskip("skimage")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import segments as rsegments  # noqa: E402
from trustlab.explain.regions.data import (  # noqa: E402
    LICENCES,
    SCENES,
    SHAPE_CLASSES,
    bam_lite,
    bam_lite_sources,
)
from trustlab.explain.regions.segments import (  # noqa: E402
    kept_fraction,
    mask_from_segments,
    segment_sizes,
    superpixels,
)


@pytest.fixture(scope="module")
def scene_set():
    return bam_lite(60, label="scene", keep_scenes=True, random_state=7)


@pytest.fixture(scope="module")
def digit_set():
    return bam_lite(60, label="object", keep_scenes=True, random_state=3)


# --------------------------------------------------------------------------------------- data


def test_scene_files_ship_with_the_packages_and_have_licence_notes():
    assert len(SCENES) == 10
    for name, (package, filename) in SCENES.items():
        assert resources.files(package).joinpath(filename).is_file(), name  # no download needed
    assert set(LICENCES) == set(SCENES)
    sources = bam_lite_sources()
    for name in SCENES:
        assert sources[name]["licence"] and sources[name]["origin"] and sources[name]["source"]
        assert sources[name]["file"] == SCENES[name][1]


def test_shapes_dtypes_and_range(digit_set):
    ds = digit_set
    assert ds.images.shape == (60, 3, 64, 64) and ds.images.dtype == np.float32
    assert ds.masks.shape == (60, 64, 64) and ds.masks.dtype == bool
    assert ds.labels.dtype == np.int64 and ds.scenes.shape == ds.images.shape
    assert ds.images.min() >= 0.0 and ds.images.max() <= 1.0
    assert ds.images.flags.c_contiguous


def test_deterministic_given_seed():
    a = bam_lite(25, object_source="shapes", random_state=11)
    b = bam_lite(25, object_source="shapes", random_state=11)
    c = bam_lite(25, object_source="shapes", random_state=12)
    np.testing.assert_array_equal(a.images, b.images)
    np.testing.assert_array_equal(a.masks, b.masks)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not np.array_equal(a.images, c.images)


@pytest.mark.parametrize("label", ["object", "scene"])
@pytest.mark.parametrize("source", ["digits", "shapes"])
def test_classes_balanced_and_distractor_balanced(label, source):
    n = 43
    ds = bam_lite(n, label=label, object_source=source, size=32, random_state=0)
    counts = np.bincount(ds.labels, minlength=ds.n_classes)
    assert counts.sum() == n and counts.max() - counts.min() <= 1
    other = ds.info["scene" if label == "object" else "object"]
    other_counts = np.bincount(other)
    assert other_counts.max() - other_counts.min() <= 1
    expected = (10 if source == "digits" else 4) if label == "object" else 10
    assert ds.n_classes == expected


def test_label_modes(scene_set, digit_set):
    assert scene_set.class_names == tuple(SCENES)
    np.testing.assert_array_equal(scene_set.labels, scene_set.info["scene"])
    assert digit_set.class_names == tuple(str(d) for d in range(10))
    np.testing.assert_array_equal(digit_set.labels, digit_set.info["object"])


@pytest.mark.parametrize("which", ["scene_set", "digit_set"])
def test_mask_is_exactly_the_pasted_object(which, request):
    ds = request.getfixturevalue(which)
    changed = np.any(ds.images != ds.scenes, axis=1)  # colour differs from the scene
    np.testing.assert_array_equal(changed, ds.masks)
    for img, mask in zip(ds.images, ds.masks, strict=True):
        colours = img[:, mask]
        assert colours.shape[1] > 0
        assert np.all(colours == colours[:, :1])  # one flat colour
        rgb = colours[:, 0]
        assert rgb.max() - rgb.min() >= 0.6  # saturated


def test_object_area_fraction_in_a_sane_range(digit_set):
    frac = digit_set.object_fractions
    assert frac.min() > 0.01 and frac.max() < 24 * 24 / 64**2
    assert 0.02 < digit_set.mean_object_fraction < 0.1
    shapes = bam_lite(40, object_source="shapes", random_state=2)
    assert shapes.object_fractions.min() >= (24 * 24 // 12) / 64**2
    assert shapes.object_fractions.max() <= 24 * 24 / 64**2


def test_scene_crops_come_from_the_named_image(scene_set):
    """Oracle: scikit-image's own loaders and resize, then a brute-force search over every offset."""
    from skimage import color, data, transform
    from sklearn.datasets import load_sample_image

    first = [int(np.flatnonzero(scene_set.labels == c)[0]) for c in range(10)]
    for i in first:
        name = scene_set.class_names[scene_set.labels[i]]
        if SCENES[name][0] == "skimage.data":
            raw = getattr(data, name)()
        else:
            raw = load_sample_image(SCENES[name][1])
        if raw.ndim == 2:
            raw = color.gray2rgb(raw)
        img = raw.astype(np.float64) / 255.0
        scale = 128 / min(img.shape[:2])
        shape = (max(128, round(img.shape[0] * scale)), max(128, round(img.shape[1] * scale)))
        big = transform.resize(img, shape, order=1, anti_aliasing=scale < 1)
        crop = scene_set.scenes[i].transpose(1, 2, 0)
        # every offset: first a 4x4 corner patch, then the whole crop at the candidates
        corner = np.lib.stride_tricks.sliding_window_view(big[:-60, :-60], (4, 4, 3))[:, :, 0]
        near = np.abs(corner - crop[:4, :4]).max(axis=(2, 3, 4)) < 1e-5
        hits = [
            (y, x)
            for y, x in zip(*np.nonzero(near), strict=True)
            if np.abs(big[y : y + 64, x : x + 64] - crop).max() < 1e-5
        ]
        assert hits, name


def test_digit_objects_are_thresholded_digits_of_their_class(digit_set):
    """Oracle: every load_digits image of the class, upsampled and thresholded; the pasted mask's
    bounding box must equal one of them exactly."""
    from skimage.transform import resize
    from sklearn.datasets import load_digits

    bunch = load_digits()

    def crop(mask):
        ys, xs = np.nonzero(mask)
        return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]

    templates = [
        crop(resize(im / 16.0, (24, 24), order=1, anti_aliasing=False) > 0.4) for im in bunch.images
    ]
    for i in range(12):
        obj = crop(digit_set.masks[i])
        hits = {
            int(t)
            for tmpl, t in zip(templates, bunch.target, strict=True)
            if tmpl.shape == obj.shape and np.array_equal(tmpl, obj)
        }
        assert int(digit_set.labels[i]) in hits


def test_shape_objects_match_their_class():
    ds = bam_lite(40, object_source="shapes", random_state=5)
    for mask, label in zip(ds.masks, ds.labels, strict=True):
        ys, xs = np.nonzero(mask)
        extent = mask.sum() / ((np.ptp(ys) + 1) * (np.ptp(xs) + 1))
        name = SHAPE_CLASSES[label]
        if name == "rectangle":
            assert extent == 1.0
        elif name == "triangle":
            assert 0.35 < extent < 0.75
        else:  # a digitised disk or ellipse fills about pi / 4 of its box
            assert 0.65 < extent < 0.92, (name, extent)


def test_split_subset_and_to_dict(digit_set):
    train, test = digit_set.split(0.25, random_state=0)
    assert len(train) + len(test) == 60
    assert set(test.class_counts.values()) <= {1, 2}
    both = np.concatenate([train.images, test.images])
    assert {a.tobytes() for a in both} == {a.tobytes() for a in digit_set.images}
    sub = digit_set.subset([3, 1])
    np.testing.assert_array_equal(sub.images[0], digit_set.images[3])
    np.testing.assert_array_equal(sub.masks[1], digit_set.masks[1])
    assert sub.labels.tolist() == digit_set.labels[[3, 1]].tolist()
    d = digit_set.to_dict()
    json.dumps(d)
    assert not {"images", "labels", "masks", "scenes", "info"} & set(d)
    assert d["n_images"] == 60 and d["n_classes"] == 10
    assert sum(d["class_counts"].values()) == 60
    assert d["mean_object_fraction"] == pytest.approx(digit_set.masks.mean())
    assert "60 images" in digit_set.summary()


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"n_images": 0}, "n_images"),
        ({"n_images": 5, "size": 16}, "size"),
        ({"n_images": 5, "label": "colour"}, "label"),
        ({"n_images": 5, "object_source": "letters"}, "object_source"),
        ({"n_images": 5, "size": 32, "object_size": 40}, "object_size"),
        ({"n_images": 5, "scene_scale": 0.5}, "scene_scale"),
    ],
)
def test_bam_lite_bad_input(kwargs, argument):
    with pytest.raises(InputError) as info:
        bam_lite(**kwargs)
    assert info.value.argument == argument


# --------------------------------------------------------------------------------- superpixels


@pytest.fixture(scope="module")
def few_images():
    return bam_lite(6, random_state=1).images


@pytest.mark.parametrize("method", ["slic", "watershed"])
def test_superpixels_consecutive_connected_and_close_to_n_segments(method, few_images):
    from scipy import ndimage

    seg = superpixels(few_images, method=method, n_segments=64)
    assert seg.shape == (6, 64, 64) and seg.dtype == np.int32
    for m in seg:
        k = int(m.max()) + 1
        np.testing.assert_array_equal(np.unique(m), np.arange(k))  # every pixel, every label
        assert 0.75 * 64 <= k <= 1.25 * 64
        if method == "slic":  # enforce_connectivity: each region is one 4-connected piece
            for g in range(k):
                assert ndimage.label(m == g)[1] == 1


def test_superpixels_same_partition_as_skimage(few_images):
    """Oracle: skimage.slic on the channels-last image, compared as partitions (pixel pairs)."""
    from skimage.segmentation import slic

    seg = superpixels(few_images[:2], n_segments=40, compactness=20)
    for img, mine in zip(few_images[:2], seg, strict=True):
        ref = slic(
            img.transpose(1, 2, 0), n_segments=40, compactness=20, start_label=0, channel_axis=-1
        )
        pairs = {(int(a), int(b)) for a, b in zip(mine.ravel(), ref.ravel(), strict=True)}
        assert len(pairs) == len(np.unique(mine)) == len(np.unique(ref))  # a bijection


def test_superpixels_cache_reads_the_file(tmp_path, few_images, monkeypatch):
    first = superpixels(few_images, cache_dir=tmp_path)
    files = list(tmp_path.glob("*.npz"))
    assert len(files) == 1

    def boom(*args, **kwargs):
        raise AssertionError("recomputed instead of reading the cache")

    monkeypatch.setattr(rsegments, "_segment_one", boom)
    second = superpixels(few_images, cache_dir=tmp_path)
    np.testing.assert_array_equal(first, second)
    assert second.dtype == np.int32
    with pytest.raises(AssertionError, match="recomputed"):  # other settings: another key
        superpixels(few_images, n_segments=30, cache_dir=tmp_path)
    with pytest.raises(AssertionError, match="recomputed"):  # other images: another key
        superpixels(few_images[::-1], cache_dir=tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"method": "quickshift"}, "method"),
        ({"n_segments": 0}, "n_segments"),
        ({"compactness": -1.0}, "compactness"),
    ],
)
def test_superpixels_bad_input(kwargs, argument, few_images):
    with pytest.raises(InputError) as info:
        superpixels(few_images, **kwargs)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    "images",
    [np.zeros((3, 64, 64)), np.zeros((1, 64, 64, 3)), np.full((1, 3, 8, 8), 2.0)],
)
def test_superpixels_bad_images(images):
    with pytest.raises(InputError) as info:
        superpixels(images)
    assert info.value.argument == "images"


segment_maps = arrays(
    np.int64,
    st.tuples(st.integers(1, 3), st.integers(1, 7), st.integers(1, 7)),
    elements=st.integers(0, 5),
)


@settings(max_examples=60, deadline=None)
@given(seg=segment_maps, data=st.data())
def test_mask_and_kept_fraction_against_brute_force(seg, data):
    n, h, w = seg.shape
    k = int(seg.max()) + 1
    chosen = [data.draw(st.lists(st.integers(0, k - 1), max_size=k, unique=True)) for _ in range(n)]
    mask = mask_from_segments(seg, chosen)
    frac = kept_fraction(seg, chosen)
    sizes = segment_sizes(seg)
    for i in range(n):
        expected = np.zeros((h, w), bool)
        count = 0
        for y in range(h):
            for x in range(w):
                expected[y, x] = seg[i, y, x] in chosen[i]
                count += int(expected[y, x])
        np.testing.assert_array_equal(mask[i], expected)
        assert frac[i] == count / (h * w)
        assert sum(int(sizes[i][g]) for g in chosen[i] if g < len(sizes[i])) == count
        assert [int((seg[i] == g).sum()) for g in range(len(sizes[i]))] == sizes[i].tolist()
        # a bool selection gives the same mask; one map alone gives that map's answer
        as_bool = np.zeros(k, bool)
        as_bool[chosen[i]] = True
        np.testing.assert_array_equal(mask_from_segments(seg[i], as_bool), expected)
        own = [g for g in chosen[i] if g <= seg[i].max()]
        assert kept_fraction(seg[i], own) == count / (h * w)


def test_mask_from_segments_bad_input():
    seg = np.array([[[0, 1], [1, 2]]])
    with pytest.raises(InputError, match="selected") as info:
        mask_from_segments(seg, [[3]])
    assert info.value.argument == "selected"
    with pytest.raises(InputError) as info:
        mask_from_segments(seg, [[0], [1]])
    assert info.value.argument == "selected"
    with pytest.raises(InputError) as info:
        mask_from_segments(np.zeros((2, 2), float), [0])
    assert info.value.argument == "segments"
