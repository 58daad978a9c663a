"""CASE-Bench metrics when one class is absent from the human labels: its recall is NaN (null in
JSON, "n/a" in the summary, no interval), never 0; its F1 is 0.0 when the judge predicted the
class for some item, else NaN, as sklearn's with ``zero_division=nan`` (review 56)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score, recall_score

from trustlab._results import json_text
from trustlab.safety.context import ContextScores, context_scores

PAGE = Path(__file__).resolve().parents[2] / "docs" / "safety-context.md"


def _sklearn(truth, pred, label):
    kwargs = {"pos_label": label, "zero_division": np.nan}
    return recall_score(truth, pred, **kwargs), f1_score(truth, pred, **kwargs)


def test_every_item_human_safe_gives_a_nan_unsafe_recall_not_zero():
    rate = np.array([13, 20, 15, 21, 12, 17, 19]) / 21.0  # all > 0.5: every item human-safe
    preds = ["safe", "unsafe", "safe", "", "safe", "unsafe", "safe"]
    result = context_scores(preds, rate, "binary", n_bootstrap=40, random_state=5)
    truth, pred = np.ones(7, int), np.array([p == "safe" for p in preds], int)
    recall, f1 = _sklearn(truth, pred, 0)
    assert math.isnan(result.unsafe_recall) and math.isnan(recall)
    assert result.f1_unsafe == f1 == 0.0  # the judge said "unsafe" three times: all wrong
    assert result.safe_recall == recall_score(truth, pred) == 4 / 7
    assert "unsafe_recall" not in result.intervals and "safe_recall" in result.intervals
    assert json.loads(json_text(result.headline()))["unsafe_recall"] is None
    assert result.to_dict()["unsafe_recall"] is None
    assert "  unsafe_recall: n/a" in result.summary().splitlines()


def test_every_item_human_unsafe_and_never_predicted_safe_gives_nan_safe_f1():
    rate = np.array([0, 3, 10, 7]) / 21.0
    result = context_scores(["unsafe", "", "unsafe", "unsafe"], rate, "binary", n_bootstrap=0)
    recall, f1 = _sklearn(np.zeros(4, int), np.zeros(4, int), 1)
    assert math.isnan(result.safe_recall) and math.isnan(recall)
    assert math.isnan(result.f1_safe) and math.isnan(f1)
    assert result.unsafe_recall == 1.0 and result.to_dict()["f1_safe"] is None


def test_the_docstring_and_the_page_say_so():
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    doc = " ".join(ContextScores.__doc__.split())
    for text in (page, doc):
        assert "absent from the human labels" in text
        assert 'has recall NaN (null in JSON, "n/a" in the summary) and no interval' in text
