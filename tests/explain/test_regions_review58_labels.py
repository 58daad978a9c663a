"""Region models read segment labels compactly per map (review 58 F4, review 55 F2).

fit and explain sized their groups by the largest label + 1: explain with one label moved to 10**7
took 3.8 GB, and fit(segments=seg * 20) trained differently from fit(segments=seg) (padded groups
in the covariance penalty, shifted noise draws). Each map's labels are now renumbered 0..K-1 in
their order, so a renumbered map gives the same result and maps labelled 0..K-1 are unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.explain.regions import RegionSparseClassifier, bam_lite, superpixels  # noqa: E402

TINY = dict(
    n_segments=9,
    pretrain_epochs=1,
    max_epochs=1,
    batch_size=8,
    selector_widths=(4, 8),
    classifier_widths=(4, 8, 8),
    random_state=2,
)


@pytest.fixture(scope="module")
def data():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    ds = bam_lite(8, size=24, object_source="shapes", random_state=11)
    seg = superpixels(ds.images, n_segments=9).astype(np.int64)
    yield ds, seg
    torch.set_num_threads(old)


def _spread(seg):
    """The same regions, labels with gaps: x 20 and a different offset per map."""
    return seg * 20 + 7 * np.arange(len(seg))[:, None, None]


def test_fit_and_explain_do_not_depend_on_the_label_numbering(data):
    ds, seg = data
    assert all(np.array_equal(np.unique(m), np.arange(m.max() + 1)) for m in seg)
    a = RegionSparseClassifier(**TINY).fit(ds.images, ds.labels, segments=seg)
    b = RegionSparseClassifier(**TINY).fit(ds.images, ds.labels, segments=_spread(seg))
    assert a.history_.loss == b.history_.loss
    for pa, pb in zip(a.selector_.parameters(), b.selector_.parameters(), strict=True):
        assert torch.equal(pa, pb)
    ra = a.explain(ds.images, segments=seg)
    rb = a.explain(ds.images, segments=_spread(seg))
    for name in ("probabilities", "tau", "mask", "soft_map", "group_mask", "scores", "segments"):
        assert np.array_equal(getattr(ra, name), getattr(rb, name)), name
    assert np.array_equal(ra.segments, seg)  # 0..K-1 maps come back as they were
    p = a.classify_selection(ds.images, rb.group_mask, segments=rb.segments)
    assert np.allclose(p, rb.probabilities, atol=1e-6)


def test_a_huge_label_costs_nothing(data):
    ds, seg = data
    model = RegionSparseClassifier(**TINY).fit(ds.images[:4], ds.labels[:4], segments=seg[:4])
    big = np.where(seg[:2] == 0, 10**9, seg[:2])
    r = model.explain(ds.images[:2], segments=big, tau=0.5)
    assert r.group_mask.shape[1] == r.scores.shape[1] == seg[:2].max() + 1
    assert np.array_equal(r.mask, model.explain(ds.images[:2], segments=seg[:2], tau=0.5).mask)
