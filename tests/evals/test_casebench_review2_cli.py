"""The casebench task from the command line: odd -T ablate values (second review)."""

from __future__ import annotations

from pathlib import Path

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


def test_a_rerun_gets_its_own_rows_and_the_ablation_names_its_baseline(tmp_path):
    from inspect_ai.log import read_eval_log

    from trustlab.evals import run_eval
    from trustlab.evals.casebench import casebench_report

    safe = "casebench-fixed/safe"  # tests/evals/conftest.py
    runs = [
        run_eval("casebench", model, log_dir=tmp_path, limit=4, task_args=args)
        for model, args in [(JUNK, {"retries": 0}), (safe, {}), (safe, {"ablate": "sender"})]
    ]
    first, rerun, cut = (read_eval_log(r.logs[0]["path"]) for r in runs)
    first.eval.model = rerun.eval.model  # two full-context runs of one model
    names = [Path(log.location).name for log in (first, rerun, cut)]
    tables = {b.caption: b for b in casebench_report([first, rerun, cut]) if hasattr(b, "rows")}
    per_model = tables["Per-model metrics (95% bootstrap intervals)"]
    assert per_model.columns[-1] == "log" and [r[-1] for r in per_model.rows] == names
    assert per_model.rows[0][5] != per_model.rows[1][5]  # same model, mode, ablation: told apart
    ablations = {r[-1]: r for r in tables["Context ablations"].rows}
    # the ablation compares with the newest full-context log sharing its items, and says which
    assert ablations[names[2]][-2] == names[1]
    assert ablations[names[2]][-3] == pytest.approx(
        ablations[names[2]][3] - ablations[names[1]][3], abs=1e-4
    )
    for caption in ("Mismatches by intended context and human label", "Mismatches by category"):
        assert {r[-1] for r in tables[caption].rows} == set(names)


def test_an_ablation_logs_output_file_holds_the_contexts_the_judge_saw(tmp_path):
    from inspect_ai.log import read_eval_log

    from trustlab.evals import run_eval
    from trustlab.evals.casebench import casebench_outputs, casebench_scores

    run = run_eval("casebench", JUNK, log_dir=tmp_path, limit=3,
                   task_args={"ablate": "sender,confidentiality", "retries": 0})  # fmt: skip
    log = read_eval_log(run.logs[0]["path"])
    records = casebench_outputs(log)
    for record, sample in zip(records, sorted(log.samples, key=lambda s: int(s.id)), strict=True):
        assert "sender" not in record["context"]
        assert "confidentiality" not in record["context"]["transmission_principle"]
        assert record["context"]["recipient"] == sample.metadata["context"]["recipient"]
        assert sample.input.count(record["context"]["recipient"]["type"]) >= 1
    assert casebench_scores(log, n_bootstrap=0).n_items == 3
