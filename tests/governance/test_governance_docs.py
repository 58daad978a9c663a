"""The docs page's Python example runs, and the page says what the instrument is and is not."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

PAGE = Path(__file__).resolve().parents[2] / "docs" / "governance-participation.md"


def test_docs_python_example_runs_and_the_page_states_its_limits(tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    text = PAGE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    for i, block in enumerate(blocks):
        exec(compile(block, f"{PAGE.name} example {i + 1}", "exec"), {})
    assert "'data': 'T2'" in capsys.readouterr().out
    flat = " ".join(text.split())
    assert "structured self- or external-assessment aid" in flat
    assert "does not measure democratic legitimacy" in flat
    assert "Unverified" in flat and "could not be read" in flat
