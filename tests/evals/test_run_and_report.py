"""run_eval / trustlab eval run: errors are errors, interrupted runs resume; logs into a report;
the task registry and report hooks. A trivial model (a trivial model) keeps these fast."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import BackendError, InputError  # noqa: E402
from trustlab.evals import (  # noqa: E402
    ReportTable,
    ReportText,
    read_logs,
    register_report_hook,
    register_task,
    run_eval,
    tasks,
)

MOCK = "trivial/model"


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_an_errored_eval_raises_naming_its_log(flaky_task, tmp_path):
    with pytest.raises(BackendError, match=r"\.eval: error: .*the scorer broke on purpose"):
        run_eval(str(flaky_task), MOCK, log_dir=tmp_path / "logs")


def test_rerunning_an_errored_run_resumes_it(flaky_task, tmp_path):
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs)
    (flaky_task.parent / "fail").unlink()
    said = []
    result = run_eval(str(flaky_task), MOCK, log_dir=logs, on_resume=said.append)
    (first,) = result.logs
    assert first["status"] == "success" and first["samples"] == 4
    assert first["resumed"] is not None and said and "eval_retry" in said[0]
    # the successful retry supersedes the errored log: a third run starts afresh
    again = run_eval(str(flaky_task), MOCK, log_dir=logs)
    assert again.logs[0]["resumed"] is None


@pytest.mark.parametrize(
    ("first", "second", "differs"),
    [
        ({"task_args": {"n": 4}}, {"task_args": {"n": 3}}, "task arguments"),
        ({}, {"limit": 2}, "limit"),
        ({}, {"model_roles": {"grader": MOCK}}, "model roles"),
    ],
)
def test_an_unfinished_run_with_other_settings_is_not_resumed(
    flaky_task, tmp_path, first, second, differs
):
    """inspect's eval_retry replays the old log's own settings: resuming a log that ran with
    other task arguments, limit or roles would drop the new ones without a word."""
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs, **first)
    (flaky_task.parent / "fail").unlink()
    said = []
    result = run_eval(str(flaky_task), MOCK, log_dir=logs, on_resume=said.append, **second)
    (entry,) = result.logs
    assert entry["resumed"] is None and entry["status"] == "success"
    expected = 3 if "task_args" in second else 2 if "limit" in second else 4
    assert entry["samples"] == expected
    assert len(said) == 1 and f"it ran with other {differs}; starting afresh" in said[0]


def test_an_unfinished_run_with_the_same_settings_is_resumed(flaky_task, tmp_path):
    logs = tmp_path / "logs"
    settings = {"task_args": {"n": 3}, "limit": 2, "model_roles": {"grader": MOCK}}
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs, **settings)
    (flaky_task.parent / "fail").unlink()
    result = run_eval(str(flaky_task), MOCK, log_dir=logs, **settings)
    assert result.logs[0]["resumed"] is not None and result.logs[0]["samples"] == 2


def test_cli_reports_an_errored_eval_as_one_line_and_exit_1(flaky_task, tmp_path, capsys):
    code, out, err = cli(
        capsys, "eval", "run", str(flaky_task), "--model", MOCK, "--out", str(tmp_path / "l")
    )
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "the scorer broke on purpose" in err and ".eval" in err


def test_cli_resumes_and_says_so_on_stderr(flaky_task, tmp_path, capsys):
    out_dir = str(tmp_path / "l")
    cli(capsys, "eval", "run", str(flaky_task), "--model", MOCK, "--out", out_dir)
    (flaky_task.parent / "fail").unlink()
    code, out, err = cli(
        capsys, "eval", "run", str(flaky_task), "--model", MOCK, "--out", out_dir, "--json"
    )
    assert code == 0 and "resuming" in err
    result = json.loads(out)
    assert result["logs"][0]["status"] == "success" and result["logs"][0]["resumed"]


def test_run_and_report_a_registered_task_on_two_models(tmp_path, capsys):
    logs = tmp_path / "logs"
    code, out, _ = cli(
        capsys, "eval", "run", "demo", "--model", MOCK, "--model", "trivial/other",
        "--limit", "3", "--out", str(logs), "-T", "max_tokens=4",
    )  # fmt: skip
    assert code == 0
    assert "inspect view --log-dir" in out and out.count("success, 3 samples") == 2
    code, out, _ = cli(capsys, "eval", "report", str(logs), "--out", str(tmp_path / "r"), "--json")
    assert code == 0
    result = json.loads(out)
    assert sorted(log["model"] for log in result["logs"]) == ["trivial/model", "trivial/other"]
    page = json.loads((tmp_path / "r" / "report.json").read_text())
    assert page["sections"][0]["id"] == "logs"
    html = (tmp_path / "r" / "report.html").read_text()
    assert "trivial/other" in html and "inspect view --log-dir" in html


def test_the_report_marks_errored_logs_and_hides_their_numbers(flaky_task, tmp_path, capsys):
    logs = tmp_path / "logs"
    with pytest.raises(BackendError):
        run_eval(str(flaky_task), MOCK, log_dir=logs)
    code, out, err = cli(capsys, "eval", "report", str(logs))
    assert code == 0 and "warning" in err and "the scorer broke on purpose" in err
    assert "the scorer broke on purpose" in read_logs(logs).errored[0]["error"]
    assert "its numbers are not results" in (logs / "report.html").read_text()


def untimed(html):
    """A report page without its creation time (two runs a second apart differ only there)."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?", "TIME", html)


def test_report_refuses_to_replace_a_report_without_overwrite(tmp_path, capsys):
    logs = tmp_path / "logs"
    run_eval("demo", MOCK, log_dir=logs, limit=2)
    other = tmp_path / "audit"  # another command's report in --out
    other.mkdir()
    (other / "report.json").write_text("{}")
    code, _, err = cli(capsys, "eval", "report", str(logs), "--out", str(other))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"trustlab: error: --out: {other} already holds a report (report.json)")
    assert "--overwrite" in err
    assert (other / "report.json").read_text() == "{}" and not (other / "report.html").exists()
    code, _, err = cli(capsys, "eval", "report", str(logs))  # --out defaults to LOG_DIR
    assert code in (0, None), err
    first = untimed((logs / "report.html").read_text())
    (logs / "report.html").write_text("edited")
    code, _, err = cli(capsys, "eval", "report", str(logs))
    assert code == 2 and "report.html, report.json" in err and "--overwrite" in err
    assert (logs / "report.html").read_text() == "edited"
    for out in (logs, other):
        code, _, err = cli(capsys, "eval", "report", str(logs), "--out", str(out), "--overwrite")
        assert code in (0, None), err
        assert untimed((out / "report.html").read_text()) == first
        assert json.loads((out / "report.json").read_text())["sections"][0]["id"] == "logs"


def test_a_report_hook_adds_its_tasks_blocks(tmp_path):
    run_eval("demo", MOCK, log_dir=tmp_path, limit=2)

    def hook(logs):
        return [
            ReportText("Per model."),
            ReportTable(["model", "n"], [[g.eval.model, len(g.samples)] for g in logs]),
        ]

    register_report_hook("demo", hook)
    result = read_logs(tmp_path)
    assert result.extra_tables["demo"][0]["rows"] == [["trivial/model", 2]]
    from trustlab.audit.sections.evals import build_page

    ids = [s["id"] for s in build_page(result).to_dict()["sections"]]
    assert ids == ["logs", "task-demo"]


def test_the_registry_resolves_names_and_refuses_unknown_ones(tmp_path):
    assert "demo" in tasks()
    register_task("demo-again", "trustlab.evals.demo:demo", "the demo task again")
    assert "demo-again" in tasks().names
    run = run_eval("demo-again", MOCK, log_dir=tmp_path, limit=1)
    assert run.logs[0]["status"] == "success"
    with pytest.raises(InputError, match="task: expected a trustlab task"):
        run_eval("no-such-task", MOCK, log_dir=tmp_path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-T", "novalue"], "-T: expected key=value"),
        # a misspelt task argument (inspect drops it and runs with the default)
        (["-T", "limt=3"], "-T: expected arguments of the demo task"),
        (["--limit", "0"], "--limit"),
        (["--model", "nomodelslash"], "--model"),
        # an unknown provider and an unknown local model (they were an unexpected failure, exit
        # 1, and an errored log that the next run tried to resume)
        (["--model", "nosuchprovider/x"], "--model: expected an inspect model name whose prov"),
        (["--model", "trustlab/nosuchmodel"], "--model: expected trustlab/<model> with the model"),
    ],
)
def test_cli_bad_input_exits_2(argv, message, tmp_path, capsys):
    base = ["eval", "run", "demo", "--out", str(tmp_path)]
    if "--model" not in argv:
        base += ["--model", MOCK]
    code, _, err = cli(capsys, *base, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob("*.eval"))  # no log left to resume


def test_report_of_a_folder_without_logs_is_bad_input(tmp_path, capsys):
    code, _, err = cli(capsys, "eval", "report", str(tmp_path))
    assert code == 2 and "inspect logs" in err


def test_a_task_argument_inspect_refuses_leaves_no_new_folder(tmp_path, capsys):
    """inspect builds the task after the log folder exists: a missing -T data file left an empty
    folder behind. A folder that was there before stays."""
    missing = tmp_path / "missing.json"
    logs = tmp_path / "new" / "logs"
    args = ["eval", "run", "casebench", "--model", MOCK, "-T", f"data={missing}", "--limit", "1"]
    code, _, err = cli(capsys, *args, "--out", str(logs))
    assert code == 2, err
    assert not logs.exists()
    (tmp_path / "kept").mkdir()
    code, _, err = cli(capsys, *args, "--out", str(tmp_path / "kept"))
    assert code == 2, err
    assert (tmp_path / "kept").is_dir()
