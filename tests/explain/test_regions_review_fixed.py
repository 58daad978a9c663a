"""A fixed-tau model has no certainty threshold: its predictions' summary and the evaluation's
accuracy row report no 'certain' share (they used to say 'certain 100.0%' whatever the confidence,
e.g. next to a mean confidence of 0.43 on noise images)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.explain.regions import bam_lite, evaluate_regions, load_checkpoint  # noqa: E402


@pytest.fixture(scope="module")
def data():
    torch.set_num_threads(1)
    ds = bam_lite(4, size=64, object_source="shapes", random_state=3)
    return ds, np.asarray(ds.class_names)[ds.labels]


def test_fixed_tau_reports_no_certain_share(data):
    ds, y = data
    fixed, dynamic = load_checkpoint("p2p_fixed"), load_checkpoint("p2p_dynamic")
    noise = np.random.default_rng(0).random(ds.images.shape).astype(np.float32)
    assert "certain" not in fixed.explain(noise).summary()
    assert "certain" not in dynamic.explain(ds.images, tau=0.2).summary()
    assert "certain" in dynamic.explain(ds.images).summary()
    ev = evaluate_regions({"fixed": fixed, "dynamic": dynamic}, ds.images, y, ds.masks, deltas=(),
                          deletion=(), insertion=())  # fmt: skip
    rows = {r["model"]: r for r in ev.accuracy}
    assert rows["fixed"]["certain"] is None
    assert rows["dynamic"]["certain"] == float(np.mean(ev.explanations["dynamic"].certain))
