"""The report page's "Eval logs" table names each row's log file: two runs of one task and model
(another -T, a rerun) were rows told apart by nothing but their numbers (review 60)."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from trustlab.audit.sections.evals import build_page  # noqa: E402
from trustlab.evals import read_logs, run_eval  # noqa: E402
from trustlab.report import Table  # noqa: E402


def test_each_row_of_the_logs_table_names_its_log_file(flaky_task, tmp_path):
    (flaky_task.parent / "fail").unlink()  # the scorer works: two successful runs
    logs = tmp_path / "logs"
    first = run_eval(str(flaky_task), "trivial/model", log_dir=logs, task_args={"n": 2})
    second = run_eval(str(flaky_task), "trivial/model", log_dir=logs, task_args={"n": 3})
    page = build_page(read_logs(logs))
    (table,) = [b for b in page.sections[0].blocks if isinstance(b, Table)]
    assert table.columns[-1] == "log"
    named = {row[-1]: row[table.columns.index("samples")] for row in table.rows}
    paths = {run.logs[0]["path"].rsplit("/", 1)[-1]: n for run, n in ((first, 2), (second, 3))}
    assert named == paths
