"""The fairness section's group metrics are fairlearn's own, with seeded bootstrap intervals."""

import json

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equalized_odds_difference,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)

from trustlab.audit import run_audit
from trustlab.audit.group_metrics import cell_counts, group_metrics, rates_from_counts

RATES = {
    "selection_rate": selection_rate,
    "true_positive_rate": true_positive_rate,
    "false_positive_rate": false_positive_rate,
}
DIFFERENCES = {
    "demographic_parity_difference": demographic_parity_difference,
    "equalized_odds_difference": equalized_odds_difference,
}


def disparate(n=600, seed=0, classes=("low", "mid", "high")):
    """Labels, predictions that err far more often in group "south", and the groups."""
    rng = np.random.default_rng(seed)
    groups = rng.choice(["north", "south", "west"], size=n, p=[0.45, 0.45, 0.1])
    y = rng.choice(classes, size=n)
    flip = rng.random(n) < np.where(groups == "south", 0.5, 0.1)
    pred = np.where(flip, rng.choice(classes, size=n), y)
    return y, pred, groups


def group_metrics_section(result):
    sections = {s["id"]: s for s in json.loads(result.json_path.read_text())["sections"]}
    return sections["fairness"]["data"]["group_metrics"]


def test_the_section_numbers_are_fairlearns_on_the_audited_rows(default_audit):
    ctx = default_audit.context
    stored = group_metrics_section(default_audit)
    assert stored["one_vs_rest"] is True and stored["positive_classes"] == ["A", "N", "U", "Y"]
    for name, pred in ctx.predictions.items():
        for k in ctx.labels:
            y_k, p_k = (ctx.y_test == k).astype(int), (pred == k).astype(int)
            metrics = stored["models"][name][k]
            for key, function in DIFFERENCES.items():
                expected = function(y_k, p_k, sensitive_features=ctx.g_test)
                assert metrics[key]["estimate"] == expected  # exact: fairlearn computed it
            frame = MetricFrame(
                metrics=RATES, y_true=y_k, y_pred=p_k, sensitive_features=ctx.g_test
            )
            for group, values in metrics["by_group"].items():
                assert values["count"] == int(np.sum(ctx.g_test == group))
                for key in RATES:
                    assert values[key]["estimate"] == frame.by_group.loc[group, key]


def test_binary_labels_use_the_second_label_as_positive(tmp_path):
    y, pred, groups = disparate(classes=("no", "yes"))
    table = pd.DataFrame({"y": y, "p": pred, "g": groups})
    result = run_audit(table, label="y", group="g", pred="p", out=tmp_path, sections=["fairness"])
    stored = group_metrics_section(result)
    assert stored["one_vs_rest"] is False and list(stored["models"]["p"]) == ["yes"]
    y_k, p_k = (y == "yes").astype(int), (pred == "yes").astype(int)
    for key, function in DIFFERENCES.items():
        value = stored["models"]["p"]["yes"][key]["estimate"]
        assert value == function(y_k, p_k, sensitive_features=groups)
    assert "the positive class is y = yes" in result.html_path.read_text()


def test_resampled_statistics_equal_fairlearn_on_the_resampled_rows():
    y, pred, groups = disparate(n=300, seed=3)
    labels, group_values = np.unique(np.concatenate([y, pred])), np.unique(groups)
    counts = cell_counts(y, pred, groups, labels, group_values)
    rng = np.random.default_rng(0)
    cells = np.array(np.unravel_index(np.arange(counts.size), counts.shape)).T
    draws = [rng.multinomial(300, counts.ravel() / 300) for _ in range(4)]
    # a resample without the small group, and one whose "west" group has no "high" row
    without_west = counts.copy()
    without_west[:, :, list(group_values).index("west")] = 0
    no_positives = counts.copy()
    no_positives[list(labels).index("high"), :, list(group_values).index("west")] = 0
    draws += [without_west.ravel(), no_positives.ravel()]
    checked = 0
    for draw in draws:
        rows = np.repeat(cells, draw, axis=0)  # the resampled rows themselves
        y_b, p_b, g_b = labels[rows[:, 0]], labels[rows[:, 1]], group_values[rows[:, 2]]
        for index, k in enumerate(labels):
            ours = rates_from_counts(draw.reshape(1, *counts.shape), index)
            y_k, p_k = (y_b == k).astype(int), (p_b == k).astype(int)
            for key, function in DIFFERENCES.items():
                expected = function(y_k, p_k, sensitive_features=g_b)
                assert ours[key][0] == pytest.approx(expected, abs=1e-12)
            frame = MetricFrame(metrics=RATES, y_true=y_k, y_pred=p_k, sensitive_features=g_b)
            for j, group in enumerate(group_values):
                for key in RATES:
                    if group in frame.by_group.index:
                        expected = frame.by_group.loc[group, key]
                        assert ours[key][0, j] == pytest.approx(expected, abs=1e-12)
                        checked += 1
                    else:
                        assert np.isnan(ours[key][0, j])
    assert checked > 100


def test_intervals_cover_the_estimates_of_a_real_disparity():
    y, pred, groups = disparate()
    result = group_metrics(y, pred, groups, np.unique(y), random_state=0)
    assert result["n_boot"] == 1000 and result["confidence"] == 0.95
    for metrics in result["classes"].values():
        for key in DIFFERENCES:
            value = metrics[key]
            assert value["lower"] < value["estimate"] < value["upper"]
        for values in metrics["by_group"].values():
            for key in RATES:
                assert values[key]["lower"] <= values[key]["estimate"] <= values[key]["upper"]


def test_every_interval_covers_its_estimate_in_the_default_audit(default_audit):
    stored = group_metrics_section(default_audit)
    for classes in stored["models"].values():
        for metrics in classes.values():
            for key in DIFFERENCES:
                value = metrics[key]
                assert value["lower"] <= value["estimate"] <= value["upper"]
                assert 0 <= value["lower"] and value["upper"] <= 1
            for values in metrics["by_group"].values():
                for key in RATES:
                    value = values[key]
                    assert value["lower"] <= value["estimate"] <= value["upper"]


def test_a_difference_interval_is_the_bootstrap_recentred_on_the_estimate():
    # small groups alike: the resampled largest-minus-smallest differences nearly all read
    # above the estimate, so their plain percentile interval would miss it
    rng = np.random.default_rng(17)
    groups = np.repeat(["a", "b", "c", "d", "e"], [400, 40, 40, 40, 40])
    y = rng.choice(["no", "yes"], size=groups.size)
    pred = np.where(rng.random(groups.size) < 0.8, y, np.where(y == "yes", "no", "yes"))
    labels = np.array(["no", "yes"])
    result = group_metrics(y, pred, groups, labels, random_state=0)
    counts = cell_counts(y, pred, groups, labels, np.unique(groups))
    resampled = np.random.default_rng(0).multinomial(
        groups.size, counts.ravel() / groups.size, size=1000
    )
    boot = rates_from_counts(resampled.reshape(1000, *counts.shape), 1)
    for key in DIFFERENCES:
        value, samples = result["classes"]["yes"][key], boot[key]
        expected = np.quantile(
            np.clip(value["estimate"] + samples - samples.mean(), 0, 1), [0.025, 0.975]
        )
        assert [value["lower"], value["upper"]] == pytest.approx(expected.tolist(), abs=1e-12)
        assert value["lower"] <= value["estimate"] <= value["upper"]
    plain = np.quantile(boot["demographic_parity_difference"], 0.025)
    assert plain > result["classes"]["yes"]["demographic_parity_difference"]["estimate"]


def test_intervals_are_seeded_by_the_audit_random_state():
    y, pred, groups = disparate()
    labels = np.unique(y)
    first = group_metrics(y, pred, groups, labels, random_state=4)
    assert group_metrics(y, pred, groups, labels, random_state=4) == first
    other = group_metrics(y, pred, groups, labels, random_state=5)
    key = "equalized_odds_difference"
    assert other["classes"]["low"][key]["estimate"] == first["classes"]["low"][key]["estimate"]
    assert other["classes"]["low"][key]["lower"] != first["classes"]["low"][key]["lower"]


def test_the_report_shows_the_tables_and_states_the_interval(default_audit):
    html = default_audit.html_path.read_text()
    assert "demographic parity difference" in html and "equalized odds difference" in html
    assert "read one-vs-rest" in html
    interval = (
        "95% intervals: percentiles of a bootstrap over the 1,266 audited rows (1,000 resamples "
        "drawn with replacement, seed 0)"
    )
    assert f"{interval}." in html  # the per-group rates
    assert f"{interval}, re-centred on the estimate (estimate + resampled value - mean" in html
    assert "random_forest: selection rate, true and false positive rate per region group" in html


def test_the_headline_has_the_largest_differences_over_the_classes(default_audit):
    stored = group_metrics_section(default_audit)
    for name, numbers in default_audit.headline().items():
        for key in DIFFERENCES:
            largest = max(m[key]["estimate"] for m in stored["models"][name].values())
            assert numbers[key] == largest


def test_an_estimate_outside_its_interval_is_pointed_out():
    from trustlab.audit.sections.fairness import _outside_note

    inside = {"estimate": 0.2, "lower": 0.1, "upper": 0.3}
    below = {"estimate": 0.05, "lower": 0.06, "upper": 0.3}
    models = {
        "m": {
            "a": {"demographic_parity_difference": inside, "equalized_odds_difference": below},
            "b": {"demographic_parity_difference": inside, "equalized_odds_difference": inside},
        }
    }
    [note] = _outside_note(models)
    assert note.text.startswith("Estimates outside their interval: m / a / equalized odds")
    models["m"]["a"]["equalized_odds_difference"] = inside
    assert _outside_note(models) == []


def test_the_summary_says_the_difference_is_the_largest_over_the_classes(default_audit):
    largest = default_audit.headline()["random_forest"]["equalized_odds_difference"]
    line = f"equalized odds difference (largest over the classes) {largest:.4f}"
    assert line in default_audit.summary()


def test_differences_equal_fairlearns_functions_where_a_rate_is_undefined():
    """The differences are read off the one MetricFrame; fairlearn's functions build their own.
    Same numbers exactly, also with a group lacking positives or negatives (rate 0) and ties."""
    y, pred, groups = disparate(n=120, seed=1, classes=("a", "b", "c"))
    y[groups == "west"] = "a"  # west: no row of b or c (no positives), all of a (no negatives)
    result = group_metrics(y, pred, groups, np.unique(np.r_[y, pred]), random_state=0, n_boot=5)
    assert result["classes"]["b"]["groups_without_positives"] == ["west"]
    assert result["classes"]["a"]["groups_without_negatives"] == ["west"]
    for k, metrics in result["classes"].items():
        y_k, p_k = (y == k).astype(int), (pred == k).astype(int)
        for key, function in DIFFERENCES.items():
            expected = function(y_k, p_k, sensitive_features=groups)
            assert metrics[key]["estimate"] == expected
