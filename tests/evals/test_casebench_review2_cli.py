"""The casebench task from the command line: odd -T ablate values (second review)."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")
from cli_helpers import one_line, run_main  # noqa: E402

JUNK = "trivial/junk"  # tests/evals/conftest.py


@pytest.mark.parametrize("value", ["true", "1"])
def test_a_yaml_bool_or_number_as_ablate_is_one_line_and_exit_2(value, tmp_path, capsys):
    code, _, err = run_main(
        ["eval", "run", "casebench", "-T", f"ablate={value}", "--model", JUNK,
         "--out", tmp_path / "logs"],
        capsys,
    )  # fmt: skip
    assert code == 2, err
    assert "ablate: expected CI group or key names" in one_line(err)


def test_the_log_names_an_ablation_in_one_way(tmp_path):
    from inspect_ai.log import read_eval_log

    from trustlab.evals import run_eval

    run = run_eval("casebench", JUNK, log_dir=tmp_path, limit=1,
                   task_args={"ablate": "recipient, sender,recipient"})  # fmt: skip
    (entry,) = run.logs
    assert read_eval_log(entry["path"]).eval.metadata["ablate"] == "sender,recipient"
