"""The FastPD docs page and docstring examples run as written."""

import doctest
import re
from pathlib import Path

import matplotlib
import pytest

import trustlab.explain.fastpd.explainer
import trustlab.explain.fastpd.plots
import trustlab.explain.fastpd.table

MODULES = [
    trustlab.explain.fastpd.explainer,
    trustlab.explain.fastpd.plots,
    trustlab.explain.fastpd.table,
]

PAGE = Path(__file__).resolve().parents[2] / "docs" / "explain-fastpd.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_docs_page_has_a_python_example():
    assert BLOCKS


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_docs_page_example_runs(index, tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[index], f"explain-fastpd.md example {index + 1}", "exec"), {})
    assert "FastPD importance of the prediction over 200 rows" in capsys.readouterr().out


def test_docstring_examples_run():
    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in MODULES]
    assert sum(r.attempted for r in results) >= 8
    assert sum(r.failed for r in results) == 0
