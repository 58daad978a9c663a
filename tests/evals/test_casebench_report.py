"""The casebench report hook: its tables in trustlab eval report's report.json and report.html,
with numbers equal to casebench_scores and human_statistics."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402
from trustlab.evals.casebench import casebench_scores  # noqa: E402
from trustlab.safety.context import human_statistics, synthetic_casebench  # noqa: E402

JUNK = "trivial/junk"  # nothing parseable (conftest.py)
SAFE = "casebench-fixed/safe"  # always a parseable "safe" (conftest.py)


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Logs of two models, one with an ablation, and the report of their folder."""
    logs = tmp_path_factory.mktemp("casebench-logs")
    run_eval("casebench", [SAFE, JUNK], log_dir=logs, limit=6, task_args={"retries": 0})
    run_eval("casebench", SAFE, log_dir=logs, limit=6, task_args={"ablate": "recipient"})
    out = tmp_path_factory.mktemp("casebench-report")
    return logs, out


def test_the_report_holds_the_casebench_tables(report, capsys):
    logs, out = report
    code, _, err = cli(capsys, "eval", "report", str(logs), "--out", str(out))
    assert code == 0, err
    page = json.loads((out / "report.json").read_text())
    (section,) = [s for s in page["sections"] if s["id"] == "task-casebench"]
    captions = [t["caption"] for t in section["data"]["tables"]]
    assert captions == [
        "Per-model metrics (95% bootstrap intervals)",
        "Context ablations",
        "Mismatches by intended context and human label",
        "Mismatches by category",
        "Human statistics of the shipped synthetic set",
    ]
    html = (out / "report.html").read_text()
    for caption in captions:
        assert caption in html


def test_the_reports_numbers_are_the_scores_of_each_log(report):
    logs, _ = report
    result = read_logs(logs)
    tables = {t["caption"]: t for t in result.extra_tables["casebench"]}
    per_model = tables["Per-model metrics (95% bootstrap intervals)"]
    from inspect_ai.log import read_eval_log

    full = {}
    for entry in result.logs:
        log = read_eval_log(entry["path"])
        scores = casebench_scores(log)
        row = next(
            r
            for r in per_model["rows"]
            if r[0] == log.eval.model and r[2] == (log.eval.metadata["ablate"] or "none")
        )
        low, high = scores.intervals["accuracy"]
        assert row[4] == f"{scores.accuracy:.3f} [{low:.3f}, {high:.3f}]"
        assert row[-2].startswith(f"{scores.n_parse_failures} (")
        if not log.eval.metadata["ablate"]:
            full[log.eval.model] = scores
    junk = per_model["rows"][[r[0] for r in per_model["rows"]].index(JUNK)]
    assert junk[-2] == "6 (100.0%)"  # items with no parsed answer
    assert junk[-3] == "6 of 6 (100.0%)"  # unparseable answers (one per item here)
    ablations = tables["Context ablations"]["rows"]
    (cut,) = [r for r in ablations if r[2] == "recipient"]
    assert cut[0] == SAFE and cut[-3] == pytest.approx(cut[3] - full[SAFE].accuracy, abs=1e-4)
    assert {r[2] for r in ablations} == {"none (full context)", "recipient"}
    by_context = tables["Mismatches by intended context and human label"]["rows"]
    assert sum(r[5] for r in by_context) == 3 * 6  # every item of each of the 3 logs, once


def test_the_human_panel_is_human_statistics_of_the_whole_data_set(report):
    logs, _ = report
    tables = {t["caption"]: t for t in read_logs(logs).extra_tables["casebench"]}
    panel = dict(tables["Human statistics of the shipped synthetic set"]["rows"])
    stats = human_statistics(synthetic_casebench())
    assert panel["queries (paired)"] == stats.n_queries == 30  # the full set, not the 6 judged
    assert panel["pooled z"] == round(stats.pooled.statistic, 3)
    assert panel["majority flips"] == stats.n_flips


def test_a_fresh_process_finds_the_hook_of_a_builtin_task(report):
    """``trustlab eval report`` in a new process imports no task module itself: read_logs loads
    the built-in task's module (and so its hook) for the logs it finds."""
    logs, _ = report
    code = (
        "import sys; from trustlab.evals import read_logs; "
        "assert 'trustlab.evals.casebench' not in sys.modules; "
        f"print(sorted(read_logs({str(logs)!r}).extra_tables))"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['casebench']"


def test_an_ablation_is_compared_on_the_items_both_logs_judged(tmp_path):
    """The accuracy change of an ablation is measured on the items it and the full-context log
    both judged (by sample id, from the same data): a judge that always answers "safe" cannot
    change, whatever --limit each log ran with; other data or no shared item give "n/a"."""
    from inspect_ai.log import read_eval_log

    from trustlab.evals.casebench import casebench_report

    logs = tmp_path / "logs"
    run_eval("casebench", SAFE, log_dir=logs, task_args={"retries": 0})  # all 60 items
    run_eval("casebench", SAFE, log_dir=logs, limit=6, task_args={"ablate": "sender"})
    data = tmp_path / "CASEBench_data.json"
    data.write_text(json.dumps(synthetic_casebench().records()[:6]))  # the same items, elsewhere
    run_eval("casebench", SAFE, log_dir=logs, task_args={"ablate": "recipient", "data": str(data)})
    tables = {t["caption"]: t for t in read_logs(logs).extra_tables["casebench"]}
    rows = {r[2]: r for r in tables["Context ablations"]["rows"]}
    assert rows["sender"][-3] == 0.0  # the whole set's accuracy differs from its first 6 items'
    assert rows["sender"][-4] == 6  # items compared
    assert rows["none (full context)"][-4:-2] == [60, 0.0]
    assert rows["recipient"][-3].startswith("n/a") and "data" in rows["recipient"][-3]
    # no item in common: the full-context log's first 6 items dropped
    by_ablation = {}
    for entry in read_logs(logs).logs:
        log = read_eval_log(entry["path"])
        by_ablation[log.eval.metadata["ablate"]] = log
    full, sender = by_ablation[""], by_ablation["sender"]
    full.samples = [s for s in full.samples if int(s.id) >= 6]
    (table,) = [
        b
        for b in casebench_report([full, sender])
        if getattr(b, "caption", "") == "Context ablations"
    ]
    (row,) = [r for r in table.rows if r[2] == "sender"]
    assert row[-4] == 0 and row[-3].startswith("n/a") and "no item" in row[-3]
