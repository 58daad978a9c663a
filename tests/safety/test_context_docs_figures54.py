"""docs/safety-context.md's human-statistics figures that ``test_context_authors.py`` does not pin.

On the authors' 900 items (the oracle, votes only): a safe majority on 90.2 % of the items under
safe-intended contexts against 0 %; mean per-query difference 0.4147 with the cluster bootstrap
interval [0.397, 0.431] (``human_statistics``'s defaults: 2,000 resamples, ``random_state=0``);
the spec's 51.5 and p = 5.1e-75 from the differences of the files' ``safe_rate`` floats (57
distinct values, 448 non-zero, against 22 and 445 from the vote counts); and the 50 items whose
labels differ between the two equally accurate llama370B logits ablations. Measured 2026-12-05;
the data are fixed, so the figures are pinned at the page's digits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import wilcoxon
from test_context_authors import ITEMS, OUTPUTS, _pairs, _records  # tests/safety is on sys.path

from trustlab.safety.context import human_statistics, load_casebench

PAGE = Path(__file__).resolve().parents[2] / "docs" / "safety-context.md"


@pytest.fixture(scope="module")
def human():
    return human_statistics(load_casebench(_records("data_scores")))  # the defaults


def test_majorities_and_the_cluster_interval(human):
    data = human.to_dict()
    assert round(100 * data["safe_majority_safe_context"], 1) == 90.2
    assert data["safe_majority_unsafe_context"] == 0.0
    interval = data["cluster_interval"]
    assert round(interval["estimate"], 4) == 0.4147
    assert (round(interval["low"], 3), round(interval["high"], 3)) == (0.397, 0.431)


def test_the_specs_wilcoxon_comes_from_the_safe_rate_floats():
    pairs = _pairs()
    rates = [item["safe_rate"] for item in ITEMS]
    floats = [rates[a] - rates[b] for a, b in pairs]
    votes = [sum(v == 1 for v in item["scores"]) for item in ITEMS]
    counts = [votes[a] - votes[b] for a, b in pairs]
    assert len(set(floats)) == 57 and sum(d != 0 for d in floats) == 448
    assert len(set(counts)) == 22 and sum(d != 0 for d in counts) == 445
    reference = wilcoxon(floats)
    assert reference.statistic == 51.5
    assert f"{reference.pvalue:.1e}" == "5.1e-75"


def test_equal_accuracies_of_two_ablations_come_from_different_predictions():
    recipient = OUTPUTS["exp/safety_llama370B/output_logits_recipient.json"]["predictions"]
    principle = OUTPUTS["exp/safety_llama370B/output_logits_transmission_principle.json"]
    labels = [
        np.array([float(p) > 0.5 for p in ps]) for ps in (recipient, principle["predictions"])
    ]
    assert int((labels[0] != labels[1]).sum()) == 50


def test_the_page_states_these_figures():
    # review 54d: the tests above held the figures but read no page, so a changed page passed
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    for shown in (
        "a safe majority on 90.2 % against 0 % of the items",
        "mean per-query difference 0.4147",
        "resampling queries, [0.397, 0.431]",
        "The spec's 51.5 and p = 5.1e\u221275 come from subtracting",
        "445 non-zero differences, 22 distinct values",
        "(57 distinct values) and three zero differences non-zero",  # 448 - 445
        "(50 items differ in label)",
    ):
        assert shown in text, shown
