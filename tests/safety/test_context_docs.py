"""docs/safety-context.md: its Python example runs, and its command lines run (through the
``safety context`` group, mounted here until main mounts it)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib
import pytest
import typer

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "safety-context.md"
sys.path.insert(0, str(ROOT / "tests" / "cli"))
sys.path.insert(0, str(ROOT / "tests"))


def test_the_python_example_runs(tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), {})
    assert "pooled z" in capsys.readouterr().out


def test_the_command_lines_run(tmp_path, monkeypatch, capsys):
    import trustlab.cli.main as cli_main
    from cli_helpers import documented, run_main
    from test_cli_examples import BUILDERS
    from trustlab.cli import safety_context

    if "context" not in typer.main.get_command(cli_main.app).commands["safety"].commands:
        root, safety = typer.Typer(), typer.Typer()
        safety.add_typer(safety_context.app, name="context")
        root.add_typer(safety, name="safety")
        monkeypatch.setattr(cli_main, "app", root)
    monkeypatch.chdir(tmp_path)
    BUILDERS["safety-context.md"](tmp_path)
    lines = documented("docs/safety-context.md", "trustlab safety context")
    assert len(lines) == 5
    for args in lines:
        code, out, err = run_main(args, capsys)
        assert code == 0, (args, err)
        assert out.strip()
    assert (tmp_path / "scored" / "result.json").exists()


@pytest.mark.parametrize("page", ["README.md"])
def test_the_readme_lines_run(page, monkeypatch, capsys):
    import trustlab.cli.main as cli_main
    from cli_helpers import documented, run_main
    from trustlab.cli import safety_context

    if "context" not in typer.main.get_command(cli_main.app).commands["safety"].commands:
        root, safety = typer.Typer(), typer.Typer()
        safety.add_typer(safety_context.app, name="context")
        root.add_typer(safety, name="safety")
        monkeypatch.setattr(cli_main, "app", root)
    for args in documented(page, "trustlab safety context"):
        code, _, err = run_main(args, capsys)
        assert code == 0, (args, err)
