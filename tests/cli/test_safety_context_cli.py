"""``trustlab safety context score | stats | power`` through trustlab's main()."""

from __future__ import annotations

import json

import pytest
import typer

import trustlab.cli.main as cli_main
from cli_helpers import one_line, run_main
from trustlab.cli import safety_context
from trustlab.safety.context import make_synthetic_outputs, synthetic_casebench


@pytest.fixture
def run(capsys, monkeypatch):
    """``run(*args)`` runs ``trustlab ARGS``; until the lead mounts ``safety context`` in main,
    a root app with the group mounted at the same place stands in for main's."""
    command = typer.main.get_command(cli_main.app)
    if "context" not in command.commands["safety"].commands:
        root, safety = typer.Typer(), typer.Typer()
        safety.add_typer(safety_context.app, name="context")
        root.add_typer(safety, name="safety")
        monkeypatch.setattr(cli_main, "app", root)
    return lambda *args: run_main(args, capsys)


@pytest.fixture
def outputs(tmp_path):
    paths = {}
    for mode in ("binary", "score", "logits"):
        path = tmp_path / f"output_{mode}.json"
        path.write_text(json.dumps(make_synthetic_outputs(synthetic_casebench(), mode)))
        paths[mode] = path
    return paths


@pytest.mark.parametrize("mode", ["binary", "score", "logits"])
def test_score_json_prints_exactly_the_headline_keys(run, outputs, mode):
    code, out, _ = run("safety", "context", "score", outputs[mode], "--mode", mode, "--json")
    assert code == 0
    keys = ["accuracy", "safe_recall", "unsafe_recall", "f1_safe", "f1_unsafe"]
    if mode != "binary":
        keys += ["pearson", "bce", "brier"]
    assert list(json.loads(out)) == keys


def test_score_out_holds_the_full_result(run, outputs, tmp_path):
    out_dir = tmp_path / "res"
    code, out, _ = run(
        "safety",
        "context",
        "score",
        outputs["score"],
        "--mode",
        "score",
        "--model",
        "toy-judge",
        "--out",
        out_dir,
    )
    assert code == 0 and "pearson" in out
    full = json.loads((out_dir / "result.json").read_text())
    assert {"intervals", "by_context", "by_category", "n_parse_failures"} <= set(full)
    assert (out_dir / "metrics.png").exists()
    code, _, err = run(
        "safety", "context", "score", outputs["score"], "--mode", "score", "--out", out_dir
    )
    assert code == 2 and "--overwrite" in one_line(err)


def test_unknown_mode_is_one_line_and_exit_2(run, outputs):
    code, _, err = run("safety", "context", "score", outputs["binary"], "--mode", "stars")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --mode: expected one of 'binary'")


def test_missing_ci_field_is_one_line_and_exit_2(run, tmp_path):
    records = synthetic_casebench().records()
    del records[4]["context"]["transmission_principle"]["confidentiality"]
    path = tmp_path / "data.json"
    path.write_text(json.dumps(records))
    code, _, err = run("safety", "context", "stats", path)
    assert code == 2
    assert "record 4: field context.transmission_principle.confidentiality" in one_line(err)


def test_stats_on_the_synthetic_set(run):
    code, out, _ = run(
        "safety", "context", "stats", "--synthetic", "--json", "--n-bootstrap", "200"
    )
    assert code == 0
    result = json.loads(out)
    assert result["n_queries"] == 30 and result["pooled"]["p_value"] < 1e-6
    code, _, err = run("safety", "context", "stats")
    assert code == 2 and "--synthetic" in one_line(err)


def test_power_matches_the_21_annotators(run):
    code, out, _ = run("safety", "context", "power", "--p1", ".65", "--p2", ".23", "--json")
    assert code == 0 and json.loads(out)["n_required"] == 21
    code, out, _ = run(
        "safety", "context", "power", "--p1", ".6", "--p2", ".4", "--design", "unpooled", "--json"
    )
    assert code == 0 and json.loads(out)["design"] == "unpooled"
    code, _, err = run("safety", "context", "power", "--p1", ".6", "--p2", ".4", "--design", "x")
    assert code == 2 and one_line(err).startswith("trustlab: error: --design:")
    code, _, err = run("safety", "context", "power", "--p1", ".6", "--p2", ".4", "--power", "2")
    assert code == 2 and one_line(err).startswith("trustlab: error: --power:")
