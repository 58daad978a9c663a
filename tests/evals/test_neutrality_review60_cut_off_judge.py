"""A judged neutrality log whose every answer was cut off inside its reasoning keeps its judge's
name in the report (review 60: its rows said "judge baseline" though --judge was bound)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("inspect_ai")

from trustlab.evals.neutrality import SCORER, log_names  # noqa: E402


def _log(metas):
    samples = [SimpleNamespace(scores={SCORER: SimpleNamespace(metadata=m)}) for m in metas]
    return SimpleNamespace(location="/logs/a.eval", eval=SimpleNamespace(model="m", task_id="t"),
                           samples=samples)  # fmt: skip


def test_a_log_whose_answers_were_all_cut_off_names_its_judge():
    cut = {"reasoning_unfinished": True, "judge": "hjudge/j", "baseline_label": None}
    assert log_names([_log([cut, cut])]) == ["m (judge hjudge/j, log a.eval)"]
    # one answer that was not cut off names the judge as before; a log before the rule
    # (no judge beside a cut-off answer) stays "baseline"
    answered = {"judge": "other/j", "baseline_label": "refusal"}
    assert log_names([_log([cut, answered])]) == ["m (judge other/j, log a.eval)"]
    old = {"reasoning_unfinished": True}
    assert log_names([_log([old])]) == ["m (judge baseline, log a.eval)"]
