"""Review 59 (evals): the casebench report names a finished log written without its samples
(inspect's ``--no-log-samples``) as such, as the neutrality reports do; it said "1 unfinished
or errored log(s) left out" of a log that finished without error."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")


def test_a_finished_log_without_samples_is_not_called_unfinished_or_errored(tmp_path):
    import inspect_ai

    from trustlab.evals import read_logs
    from trustlab.evals.casebench import casebench

    for name, keep in (("bare", False), ("kept", True)):
        inspect_ai.eval(
            casebench(mode="binary"), model=f"casebench-fixed/{name}", limit=3,
            log_dir=str(tmp_path), display="none", log_samples=keep,
        )  # fmt: skip
    report = read_logs(tmp_path)
    (text, table, *_) = report.extras["casebench"]
    assert "0 unfinished or errored log(s) left out" in text.text
    assert "1 finished log(s) without samples left out (written with inspect's" in text.text
    assert [row[0] for row in table.rows] == ["casebench-fixed/kept"]
