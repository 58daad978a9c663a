"""A newcomer going from README.md to a docs page can make the files its first command reads and
read the words that command prints: the page says how each input file is written, in the layout
the command reads, and defines the figures the summary names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from cli_helpers import run_main

ROOT = Path(__file__).resolve().parents[1]


def _page(name: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / "docs" / name).read_text())


def _before_first(text: str, command: str) -> str:
    """The prose of ``text`` up to its first ``command`` (what a reader has seen by then)."""
    at = text.find(command)
    assert at >= 0, f"the page no longer shows {command!r}"
    return text[:at]


def test_fastpd_page_says_how_its_model_files_are_written():
    import skops.io
    import xgboost

    before = _before_first(_page("explain-fastpd.md"), "trustlab explain fastpd --model")
    assert 'skops.io.dump(model, "model.skops")' in before
    assert 'model.save_model("booster.json")' in before
    assert callable(skops.io.dump) and callable(xgboost.XGBClassifier().save_model)


def test_ranking_page_says_how_its_prediction_files_are_written():
    before = _before_first(_page("evaluation-ranking.md"), "trustlab evaluate rank --predictions")
    assert 'np.save(f"runs/{name}.npy", proba)' in before
    assert 'np.save("y_test.npy", y_new)' in before


def test_dsi_page_gives_the_layout_of_deltas_that_the_command_reads(tmp_path, capsys):
    text = _page("privacy-dsi.md")
    command = "trustlab privacy dsi --deltas deltas.npy"
    after = text[text.find(command) :][:1200]
    assert "one difference `F(U) - F(U_i)` per row, shape `(n, d)`" in after
    deltas = np.random.default_rng(0).normal(size=(5, 20))  # n = 5 differences, d = 20
    np.save(tmp_path / "deltas.npy", deltas)
    args = ["privacy", "dsi", "--deltas", tmp_path / "deltas.npy", "--epsilon", "2"]
    code, out, _ = run_main([*args, "--delta", "1e-5", "--json"], capsys)
    assert code == 0
    assert len(json.loads(out)["covariance"]["constraint_values"]) == 5
    code, out, _ = run_main([*args, "--delta", "1e-5"], capsys)
    assert code == 0 and "5 differences in d=20" in out  # what the page says to check


def test_dsi_page_defines_the_worst_slack_its_summary_prints():
    assert "`worst_slack` (`min_i (1 - constraint_values_i)`" in _page("privacy-dsi.md")


def test_guardrail_page_defines_rule_recall_before_its_tables(capsys):
    text = _page("agents-guardrail.md")
    before = _before_first(text, "| rule recall")
    assert "Rule recall is measured over the unsafe cases that name the rules they break" in before
    assert "an unsafe action it allows counts as reporting none" in before
    code, out, _ = run_main(
        ["agents", "evaluate", "--suite", "banking", "--mode", "oracle"], capsys
    )
    assert code == 0 and "rule recall:" in out  # the word the page now defines


def _out_help(path: list[str]) -> str:
    """The --out help text of ``trustlab PATH``."""
    import click
    import typer

    from trustlab.cli.main import app

    command = typer.main.get_command(app)
    for name in path:
        command = command.get_command(click.Context(command), name)
    return next(p.help for p in command.params if "--out" in getattr(p, "opts", ()))


def test_regions_out_help_names_every_file_predict_and_evaluate_write(tmp_path, capsys):
    # explain-regions.md's second command is predict; --out's help is what a reader of --help sees
    for command, extra in (("predict", ["--n", "2"]), ("evaluate", ["--n", "4"])):
        out = tmp_path / command
        args = ["explain", "regions", command, "--checkpoint", "p2p_dynamic", *extra, "--out", out]
        code, _, _ = run_main(args, capsys)
        assert code == 0
        written = {p.name for p in out.iterdir()}
        help_text = _out_help(["explain", "regions", command])
        assert written and all(name in help_text for name in written), (written, help_text)


def test_context_out_help_names_every_file_score_stats_and_power_write(tmp_path, capsys):
    # safety-context.md's first commands; the three share one --out help
    from trustlab.safety.context import make_synthetic_outputs, synthetic_casebench

    outputs = tmp_path / "output_score.json"
    outputs.write_text(json.dumps(make_synthetic_outputs(synthetic_casebench(), "score")))
    runs = {
        "score": [outputs, "--mode", "score"],
        "stats": ["--synthetic"],
        "power": ["--p1", ".65", "--p2", ".23"],
    }
    for command, extra in runs.items():
        out = tmp_path / command
        code, _, _ = run_main(["safety", "context", command, *extra, "--out", out], capsys)
        assert code == 0
        written = {p.name for p in out.iterdir()}
        help_text = _out_help(["safety", "context", command])
        assert written and all(name in help_text for name in written), (written, help_text)


def test_audit_page_says_a_loading_line_can_come_before_the_plan():
    # the plan names row counts, so it is said once the data is read; a read over 2 s shows the
    # 'loading data' step's progress line first (trustlab audit on chile, on a busy machine)
    text = _page("audit.md")
    assert "stderr first says what the audit will do" not in text
    assert "as soon as the data is read" in text
    step = re.search(r"`trustlab: audit: (loading data): 0/11 \(0%\), 2 s` line before it", text)
    assert step, "the page no longer names the loading line"
    source = (ROOT / "src" / "trustlab" / "audit" / "run.py").read_text()
    assert f'steps.start("{step.group(1)}")' in source
