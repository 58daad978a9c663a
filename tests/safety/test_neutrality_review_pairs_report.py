"""The neutrality_pairs report found in review: two logs of one model and one judge (a rerun,
another threshold) got two rows that could not be told apart; each row now names its log."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("inspect_ai")
from trustlab.evals.neutrality_pairs import PAIRS_SCORER, neutrality_pairs_report  # noqa: E402

GRADES = {"refusal_a": 0.9, "refusal_b": 0.1, "hedging_a": 0.2, "hedging_b": 0.7}


def _log(name: str, threshold: float, grades: dict) -> SimpleNamespace:
    meta = grades | {"even_handed": None, "judge": "baseline", "main_category": "POLITICS"}
    scores = {PAIRS_SCORER: SimpleNamespace(metadata=meta)}
    return SimpleNamespace(
        status="success",
        samples=[SimpleNamespace(id=i, epoch=1, scores=scores) for i in (0, 1)],
        location=f"/runs/logs/{name}.eval",
        eval=SimpleNamespace(
            task="trustlab/neutrality_pairs",
            task_id=name,
            model="trustlab/smollm2-135m-instruct",
            metadata={"threshold": threshold},
        ),
    )


def test_two_logs_of_one_model_and_judge_get_rows_that_name_their_logs():
    unreadable = dict.fromkeys(GRADES, float("nan"))
    logs = [
        _log("first", 0.5, GRADES),
        _log("second", 0.95, GRADES),
        _log("third", 0.5, unreadable),
    ]
    (table,) = [b for b in neutrality_pairs_report(logs) if hasattr(b, "rows")]
    assert table.columns[-1] == "log"
    assert [row[-1] for row in table.rows] == ["first.eval", "second.eval", "third.eval"]
    assert [row[:2] for row in table.rows] == [[logs[0].eval.model, "baseline"]] * 3
    assert "threshold 0.5" in table.rows[0][2] and "threshold 0.95" in table.rows[1][2]
    assert table.rows[2][3] == "2 of 2 pairs left out"
