"""A group without positives (or negatives) of a class: fairlearn's 0 is kept and the fairness
section notes that the equalized odds difference rests on it."""

import numpy as np

from trustlab.audit.group_metrics import group_metrics
from trustlab.audit.sections.fairness import NEVER_PREDICTED, _group_metrics


def without_high_in_east(n=300, seed=0):
    rng = np.random.default_rng(seed)
    groups = rng.choice(["east", "north", "south"], size=n)
    y = rng.choice(["low", "mid", "high"], size=n)
    y = np.where((groups == "east") & (y == "high"), "mid", y)
    pred = np.where(rng.random(n) < 0.8, y, rng.choice(["low", "mid", "high"], size=n))
    return y, pred, groups


def test_counts_and_the_difference_where_the_rates_are_defined():
    y, pred, groups = without_high_in_east()
    labels = np.unique(np.concatenate([y, pred]))
    result = group_metrics(y, pred, groups, labels, random_state=0, n_boot=20)
    high = result["classes"]["high"]
    east = high["by_group"]["east"]
    assert (east["positives"], east["negatives"]) == (0, int((groups == "east").sum()))
    assert east["true_positive_rate"]["estimate"] == 0.0  # fairlearn's convention, kept
    assert high["groups_without_positives"] == ["east"] and high["groups_without_negatives"] == []
    tpr = [high["by_group"][g]["true_positive_rate"]["estimate"] for g in ("north", "south")]
    fpr = [
        high["by_group"][g]["false_positive_rate"]["estimate"] for g in ("east", "north", "south")
    ]
    defined = max(max(tpr) - min(tpr), max(fpr) - min(fpr))
    assert np.isclose(high["equalized_odds_difference_where_defined"], defined)
    assert high["equalized_odds_difference"]["estimate"] > defined + 0.3
    assert result["classes"]["low"]["groups_without_positives"] == []


class _Context:
    def __init__(self, y, pred, groups):
        self.y_test, self.g_test = y, groups
        self.labels = np.unique(np.concatenate([y, pred]))
        self.predictions = {"yhat": pred}
        self.random_state, self.n_test, self.label = 0, len(y), "y"
        self.group = "region"


def notes(ctx) -> list[str]:
    _, blocks = _group_metrics(ctx)
    return [b.text for b in blocks if getattr(b, "kind", None) == "note"]


def test_the_section_notes_a_difference_resting_on_an_undefined_rate():
    y, pred, groups = without_high_in_east()
    found = [n for n in notes(_Context(y, pred, groups)) if "undefined" in n]
    assert len(found) == 1
    assert "yhat, class high" in found[0] and "east has no row of class high" in found[0]
    assert "class low" not in found[0] and "class mid" not in found[0]


def test_no_note_when_every_group_has_positives_and_negatives():
    rng = np.random.default_rng(1)
    y = rng.choice(["low", "mid", "high"], size=300)
    groups = rng.choice(["east", "north"], size=300)
    pred = np.where(rng.random(300) < 0.8, y, "mid")
    assert not [n for n in notes(_Context(y, pred, groups)) if "undefined" in n]


def perfect_with_a_five_row_group():
    rng = np.random.default_rng(0)
    y = np.r_[rng.integers(0, 2, 500), [0, 1, 0, 1, 0]]
    return y, y.copy(), np.array(["a"] * 500 + ["b"] * 5)


def test_a_rate_a_resample_lacks_is_left_out_not_counted_as_0():
    # a perfect model: resamples drawing none of b's 2 positives gave b a TPR of 0, and the
    # equalized odds interval read [0, 0.88]
    y, pred, groups = perfect_with_a_five_row_group()
    result = group_metrics(y, pred, groups, np.array([0, 1]), random_state=0)
    one = result["classes"]["1"]
    difference = one["equalized_odds_difference"]
    assert (difference["estimate"], difference["lower"], difference["upper"]) == (0.0, 0.0, 0.0)
    tpr = one["by_group"]["b"]["true_positive_rate"]
    assert (tpr["lower"], tpr["upper"]) == (1.0, 1.0)
    # about (3/505 + 502/505) ** 505 ~ 0.13 of the resamples draw none of the 2 positives
    assert 0.08 * result["n_boot"] < one["resamples_with_rate_left_out"] < 0.2 * result["n_boot"]
    note = [n for n in notes(_Context(y, pred, groups)) if "left out" in n]
    assert len(note) == 1 and "yhat, class 1: " in note[0]


def test_a_class_never_predicted_reads_trivially_0_not_an_interval():
    # the model never predicts "high": both differences are 0 and read "0 [0, 0]" as parity
    rng = np.random.default_rng(2)
    y = rng.choice(["low", "mid", "high"], size=300)
    groups = rng.choice(["east", "north"], size=300)
    pred = np.where(y == "high", "mid", y)
    _, blocks = _group_metrics(_Context(y, pred, groups))
    table = next(b for b in blocks if getattr(b, "caption", "").startswith("Demographic parity"))
    rows = {row[1]: row for row in table.rows}
    assert rows["high"][2:] == [0.0, NEVER_PREDICTED, 0.0, NEVER_PREDICTED]
    assert rows["low"][3].startswith("[") and NEVER_PREDICTED not in rows["mid"]
    assert "predicts for no audited row" in table.caption
