"""``trustlab eval run`` refuses a model role the task does not take (--judge on misuse,
--strong/--weak on neutrality) in one line with exit 2, before anything runs; the roles a task
takes still work."""

from __future__ import annotations

import pytest

from cli_helpers import one_line
from trustlab.errors import InputError
from trustlab.evals import run_eval
from trustlab.evals.registry import BUILTIN_TASKS, TASK_ROLES

STRONG, WEAK = "trustlab-stub/strong", "trustlab-stub/weak"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["misuse", "--strong", STRONG, "--weak", WEAK, "--judge", STRONG, "-T", "suite=text"],
         "--judge: the misuse task takes no judge"),
        (["neutrality", "--model", WEAK, "--strong", STRONG],
         "--strong: the neutrality task takes no strong model"),
        (["neutrality", "--weak", WEAK], "--weak: the neutrality task takes no weak model"),
        (["neutrality_pairs", "--model", WEAK, "--weak", WEAK],
         "--weak: the neutrality_pairs task takes no weak model"),
        (["casebench", "--model", WEAK, "--judge", STRONG],
         "--judge: the casebench task takes no judge"),
        (["demo", "--model", WEAK, "--judge", STRONG], "--judge: the demo task takes no judge"),
    ],
)  # fmt: skip
def test_a_role_the_task_does_not_take_is_refused_in_one_line(run, tmp_path, argv, message):
    out = tmp_path / "logs"
    code, stdout, err = run("eval", "run", *argv, "--limit", "1", "--out", out)
    assert code == 2 and stdout == ""
    assert one_line(err).startswith(f"trustlab: error: {message} ("), err
    assert not out.exists()  # refused before anything ran


def test_run_eval_names_the_role_in_python(tmp_path):
    with pytest.raises(InputError, match=r"^model_roles\['grader'\]: the misuse task takes no"):
        run_eval("misuse", WEAK, log_dir=tmp_path,
                 model_roles={"strong": STRONG, "weak": WEAK, "grader": STRONG})  # fmt: skip
    assert not any(tmp_path.iterdir())


def test_every_builtin_task_says_which_roles_it_takes():
    assert set(TASK_ROLES) == set(BUILTIN_TASKS)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["misuse", "--model", WEAK, "--strong", STRONG],
         "--weak: expected a model for the role 'weak' of the misuse task, got none"),
        (["misuse", "--weak", WEAK], "--strong: expected a model for the role 'strong'"),
    ],
)  # fmt: skip
def test_a_missing_role_is_named_by_its_option(run, tmp_path, argv, message):
    # it said "model_roles: ... got 'strong'", an internal argument and the roles that were given
    out = tmp_path / "logs"
    code, stdout, err = run("eval", "run", *argv, "--limit", "1", "--out", out)
    assert code == 2 and stdout == ""
    assert one_line(err).startswith(f"trustlab: error: {message}"), err
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "option"),
    [(["--strong", "nosuch/x", "--weak", WEAK], "--strong"),
     (["--strong", STRONG, "--weak", "nosuch/y"], "--weak"),
     (["--model", "nosuch/z", "--strong", STRONG, "--weak", WEAK], "--model")],
)  # fmt: skip
def test_a_model_of_an_unknown_provider_is_named_by_its_option(run, tmp_path, argv, option):
    # an unknown provider given to --strong or --weak was blamed on --model, which was not given
    code, stdout, err = run("eval", "run", "misuse", *argv, "-T", "suite=text", "-T", "n=1",
                            "--out", tmp_path / "logs")  # fmt: skip
    assert code == 2 and stdout == ""
    assert one_line(err).startswith(
        f"trustlab: error: {option}: expected an inspect model name whose provider is installed"
    ), err


def test_run_and_report_name_each_roles_model(run, tmp_path):
    # the misuse summaries read "trustlab/misuse on trustlab-stub/weak: ...", the strong model
    # named nowhere
    out = tmp_path / "logs"
    code, stdout, _ = run("eval", "run", "misuse", "--strong", STRONG, "--weak", WEAK,
                          "-T", "suite=text", "--limit", "1", "--out", out)  # fmt: skip
    assert code == 0
    on = f"on {WEAK} (strong {STRONG}, weak {WEAK}): success"
    assert on in stdout
    code, stdout, _ = run("eval", "report", out, "--out", tmp_path / "report")
    assert code == 0 and on in stdout
    code, stdout, _ = run("eval", "run", "demo", "--model", WEAK, "--limit", "1",
                          "--out", tmp_path / "demo")  # fmt: skip
    assert code == 0 and f"on {WEAK}: success" in stdout  # no roles, nothing added
