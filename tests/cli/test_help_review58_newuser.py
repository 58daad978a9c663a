"""Review 58 (newuser): every option a --help lists says what it is, a mistyped command gets one
"Did you mean", and ``privacy dsi`` spells its iteration cap ``--max-iterations`` as ``federated
simulate`` does (``--max-iter`` is hidden, kept for one release with a warning line)."""

from __future__ import annotations

import json

import click
import numpy as np
import pytest
import typer

from cli_helpers import run_main
from trustlab.cli.main import app


def _options(group=None, path=()):
    group = typer.main.get_command(app) if group is None else group
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _options(command, (*path, name))
            continue
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                yield " ".join((*path, name)), param


def test_every_listed_option_has_a_help_text():
    # equigx/regions/watermark train listed --max-epochs, --learning-rate, --batch-size with a
    # bare [default: ...]; safety polytope generate --model and --max-new-tokens with nothing
    missing = [f"{path} {param.opts[0]}" for path, param in _options() if not param.help]
    assert missing == []


@pytest.fixture
def dsi(tmp_path):
    np.save(tmp_path / "d.npy", np.random.default_rng(11).normal(size=(4, 2)))
    return ["privacy", "dsi", "--deltas", tmp_path / "d.npy", "--epsilon", "1", "--delta", "1e-5"]


def test_max_iterations_is_the_option_and_max_iter_is_hidden(capsys):
    code, out, _ = run_main(["privacy", "dsi", "--help"], capsys)
    assert code == 0 and "--max-iterations" in out and "--max-iter " not in out


def test_the_old_name_warns_and_gives_the_same_result(dsi, capsys):
    code, new, err = run_main([*dsi, "--json", "--max-iterations", "7"], capsys)
    assert (code, err) == (0, "")
    with pytest.warns(FutureWarning, match="^--max-iter is deprecated; use --max-iterations$"):
        code, old, _ = run_main([*dsi, "--json", "--max-iter", "7"], capsys)
    assert code == 0 and json.loads(old) == json.loads(new)


def test_errors_name_the_new_option_and_both_are_refused(dsi, capsys):
    code, out, err = run_main([*dsi, "--max-iterations", "0"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("trustlab: error: --max-iterations: expected an integer >= 1, got 0")
    code, out, err = run_main([*dsi, "--max-iter", "3", "--max-iterations", "3"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("trustlab: error: --max-iter: expected --max-iterations only")


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["fairnes"], "'fairness'"),
        (["fairness", "dcpp"], "'dcp'"),
        (["safety", "polytope", "fitt"], "'fit'"),
    ],
)
def test_a_mistyped_command_gets_one_suggestion(argv, suggestion, capsys):
    # typer 0.20 added its "Did you mean" to click 8.4's own: the line said it twice
    code, out, err = run_main(argv, capsys)
    assert (code, out) == (2, "")
    assert err.count("Did you mean") == 1 and f"Did you mean {suggestion}?" in err
    assert len(err.strip().splitlines()) == 1


def test_governance_errors_name_the_command_line_argument(tmp_path, capsys):
    # they named the library's arguments: "answers[1] (broken.yaml): ..." and "path: ..."
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n", encoding="utf-8")
    cases = [
        (["governance", "assess", tmp_path / "nope.yaml"], "ANSWERS: expected a readable"),
        (["governance", "assess", broken], "ANSWERS (broken.yaml): expected valid YAML"),
        (["governance", "validate", tmp_path / "nope.yaml"], "PATH: expected a readable"),
        (["governance", "validate", broken], "PATH (broken.yaml): expected valid YAML"),
    ]
    for argv, start in cases:
        code, out, err = run_main(argv, capsys)
        assert (code, out) == (2, "")
        assert err.startswith(f"trustlab: error: {start}") and len(err.splitlines()) == 1


def test_neutrality_prompts_refuses_a_negative_seed_without_per_task(capsys):
    # --seed -1 was accepted (exit 0) unless --per-task drew a sample that used it
    code, out, err = run_main(["safety", "neutrality", "prompts", "--seed", "-1"], capsys)
    assert (code, out) == (2, "")
    assert err == "trustlab: error: --seed: expected a non-negative integer seed, got -1\n"
    code, out, _ = run_main(["safety", "neutrality", "prompts", "--seed", "5", "--json"], capsys)
    assert code == 0 and out


@pytest.mark.parametrize(
    ("path", "option", "default"),
    [("agents cluster", "--n-clusters", "eigengap"), ("llm generate", "--seed", "fresh draw")],
)
def test_an_option_without_a_default_value_says_what_it_does_unset(path, option, default):
    # "Number of clusters." and "Seed for sampling." left the unset behaviour unsaid
    (param,) = [p for where, p in _options() if where == path and option in p.opts]
    assert param.default is None and "default" in param.help and default in param.help


def test_eval_report_names_its_log_dir_argument(tmp_path, capsys):
    # it said "log_dir: expected a folder of inspect logs" (the library's argument)
    code, out, err = run_main(["eval", "report", tmp_path / "nope"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("trustlab: error: LOG_DIR: expected a folder of inspect logs")
