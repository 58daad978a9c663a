"""Review 62 (misuse): the task's metrics and the report on outcomes where the strong and the weak
arm differ. The stub runs give combination 1 and both models alone 0 on every task, so reading the
weak column for the strong arm (rate, McNemar p, report rows) passed every misuse test; here the
three columns differ and every number is counted by hand (exact McNemar: p = 2 P(X <= min(b, c)),
X ~ Binomial(b + c, 1/2); Wilson 95% intervals from statsmodels' proportion_confint)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("inspect_ai")
from inspect_ai.scorer import SampleScore, Score  # noqa: E402

from trustlab.evals.misuse import SCORER, misuse, misuse_report  # noqa: E402

# ten tasks; vs strong: combination only 6, strong only 1 -> p = 2 (1 + 7) / 2^7 = 0.125;
# vs weak: combination only 3, weak only 1 -> p = 2 (1 + 4) / 2^4 = 0.625
COMBINATION = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
STRONG = [1, 0, 0, 0, 0, 0, 0, 1, 0, 0]
WEAK = [1, 1, 1, 0, 0, 0, 0, 0, 1, 1]
FAILED = [0, 0, 0, 0, 0, 0, 1, 1, 0, 0]


def _meta(i):
    return {"combination": bool(COMBINATION[i]), "strong": bool(STRONG[i]),
            "weak": bool(WEAK[i]), "decomposition_failed": bool(FAILED[i])}  # fmt: skip


def test_the_metrics_read_each_arm_on_mixed_outcomes():
    scores = [
        SampleScore(score=Score(value=float(COMBINATION[i]), metadata=_meta(i)), sample_id=i)
        for i in range(10)
    ]
    task = misuse(suite="text")
    values = {m.__registry_info__.name.split("/")[-1]: m(scores) for m in task.metrics}
    assert values == {
        "combination_success": 0.7,
        "strong_success": 0.2,
        "weak_success": 0.5,
        "mcnemar_p_vs_strong": pytest.approx(0.125, abs=1e-12),
        "mcnemar_p_vs_weak": pytest.approx(0.625, abs=1e-12),
        "decomposition_failure_rate": 0.2,
    }


def test_the_report_rows_name_the_right_arm():
    samples = [
        SimpleNamespace(
            id=f"text/{i}", epoch=1, scores={SCORER: Score(value=0.0, metadata=_meta(i))}
        )
        for i in range(10)
    ]
    log = SimpleNamespace(
        status="success", samples=samples, location="/x/run.eval",
        eval=SimpleNamespace(model_roles={"strong": "s/m", "weak": "w/m"},
                             metadata={"decomposer": "manual", "suite": "text"}),
    )  # fmt: skip
    _, success, paired = misuse_report([log])
    rows = {row[4]: row[5:8] for row in success.rows}
    # Wilson 95%: proportion_confint(k, 10, method="wilson") rounded to 3 decimals
    assert rows == {
        "combination": [10, 7, "0.700 [0.397, 0.892]"],
        "strong alone": [10, 2, "0.200 [0.057, 0.510]"],
        "weak alone": [10, 5, "0.500 [0.237, 0.763]"],
    }
    tables = {row[4]: row[5:10] for row in paired.rows}
    assert tables == {
        "combination vs strong alone": [1, 6, 1, 2, "0.125"],
        "combination vs weak alone": [4, 3, 1, 2, "0.625"],
    }
