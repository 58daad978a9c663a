"""RegionsEvaluation.summary: an undefined precision (every mask empty) reads '-' as on the page,
not 'nan', and a share of empty masks (left out of the precision's mean) is said."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from trustlab.explain.regions import RegionsEvaluation  # noqa: E402


def _evaluation(precision, empty):
    row = {"model": "m", "precision": precision, "iou": 0.2, "pxap": 0.5,
           "random_precision": 0.04 if empty < 1 else float("nan"), "empty_masks": empty}  # fmt: skip
    return RegionsEvaluation(
        dataset="d", n_images=4, object_fraction=0.04,
        accuracy=({"model": "m", "kind": "dynamic", "accuracy": 0.5, "mean_kept": 0.1},),
        localisation=(row,), fidelity=(), delta_ablation=(),
    )  # fmt: skip


def test_every_mask_empty_reads_as_no_value_and_says_so():
    line = _evaluation(float("nan"), 1.0).summary().splitlines()[4]
    assert line.split()[1:4] == ["-", "/", "0.200"] and "nan" not in line
    assert "empty masks on 100.0% of the images, left out of precision" in line


def test_some_empty_masks_are_said_and_none_is_silent():
    assert "empty masks on 25.0% of the images" in _evaluation(0.9, 0.25).summary()
    text = _evaluation(0.9, 0.0).summary()
    assert "0.900 / 0.200 / 0.500; random 0.040" in text and "empty" not in text
