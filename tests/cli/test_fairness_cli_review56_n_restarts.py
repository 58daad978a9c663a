"""Review 56: ``trustlab fairness dcp`` and ``dcp-aggregate`` say ``--n-restarts``; ``--restarts``,
the old name, is hidden and works for one release with a warning line; both is refused (exit 2)."""

import json
from pathlib import Path

import pytest

import trustlab
from cli_helpers import run_main

AGG = "group,weight,label:yes,label:no,pred:yes,pred:no\nn,0.4,0.3,0.7,0.25,0.75\ns,0.6,0.5,0.5,0.55,0.45\n"
PEOPLE = "y,p,g\n" + "".join(f"{i % 3},{(i * 2) % 3},{'ab'[i % 2]}\n" for i in range(12))


@pytest.fixture(params=["dcp-aggregate", "dcp"])
def command(request, tmp_path):
    if request.param == "dcp":
        (tmp_path / "data.csv").write_text(PEOPLE)
        extra = ["--label", "y", "--pred", "p", "--group", "g"]
    else:
        (tmp_path / "data.csv").write_text(AGG)
        extra = []
    return ["fairness", request.param, "--data", tmp_path / "data.csv", "--json", *extra]


def test_n_restarts_is_the_option_and_restarts_is_hidden(command, capsys):
    code, out, _ = run_main([*command[:2], "--help"], capsys)
    assert code == 0
    assert "--n-restarts" in out
    assert "--restarts" not in out


def test_the_old_option_warns_and_gives_the_same_result(command, capsys):
    code, new, err = run_main([*command, "--n-restarts", "2"], capsys)
    assert (code, err) == (0, "")
    with pytest.warns(FutureWarning, match="^--restarts is deprecated; use --n-restarts$") as w:
        code, old, _ = run_main([*command, "--restarts", "2"], capsys)
    assert code == 0
    # raised from trustlab's own code, so main() prints it as one "trustlab: warning:" line
    assert Path(w[0].filename).resolve().is_relative_to(Path(trustlab.__file__).parent)
    assert json.loads(old) == json.loads(new)
    result = json.loads(new)
    result = result.get("aggregate", result)
    assert len(result["restart_values"]) == 2


def test_both_options_are_refused(command, capsys):
    code, out, err = run_main([*command, "--restarts", "2", "--n-restarts", "2"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("trustlab: error: --restarts: expected --n-restarts only")


def test_dcp_aggregate_help_counts_the_independence_start(capsys):
    # --n-restarts N runs the independence start and N - 1 random ones; the help said "Random
    # restarts", promising N random ones (the dcp command's help was fixed the same way before)
    from typer.main import get_command

    from trustlab.cli.fairness import app

    params = get_command(app).commands["dcp-aggregate"].params
    (option,) = [p for p in params if p.name == "n_restarts"]
    assert option.help.startswith("Starts: the independence start, then random ones")
