"""Review 59 (evals): the misuse report names a finished log written without its samples
(inspect's ``--no-log-samples``) as such, as the neutrality and casebench reports do; it said
"1 unfinished, errored or unscored log(s) left out" of a log that finished without error."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

STUBS = {"strong": "trustlab-stub/strong", "weak": "trustlab-stub/weak"}


def test_a_finished_misuse_log_without_samples_is_named_as_such(tmp_path):
    import inspect_ai

    import trustlab.evals.misuse_stubs  # noqa: F401  (the trustlab-stub provider)
    from trustlab.evals import read_logs
    from trustlab.evals.misuse import misuse

    for keep in (False, True):
        (log,) = inspect_ai.eval(
            misuse(), model=STUBS["weak"], model_roles=STUBS, limit=2, log_dir=str(tmp_path),
            display="none", log_samples=keep,
        )  # fmt: skip
        assert log.status == "success"
    (text, table, _) = read_logs(tmp_path).extras["misuse"]
    assert "0 unfinished, errored or unscored log(s) left out" in text.text
    assert "1 finished log(s) without samples left out (written with inspect's" in text.text
    assert {row[5] for row in table.rows} == {2}  # the kept log's 2 tasks, per arm
