"""The docstring examples and the docs page example run and print what they claim."""

import doctest
import importlib
import re
from pathlib import Path

import matplotlib
import torch

torch.set_num_threads(1)

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "robustness-smoothing.md"
MODULES = ["certificates", "classifier", "runner", "training", "digits"]


def test_docstring_examples_pass():
    for name in MODULES:
        module = importlib.import_module(f"trustlab.robustness.{name}")
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= 3, name
        assert result.failed == 0, name


def test_docs_page_example_runs(capsys, tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # the example checkpoints to certify.jsonl
    code = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), re.S)[0]
    exec(compile(code, str(DOCS_PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert "cost-sensitive: cannot become any of [8] within radius" in out
    assert "Randomized smoothing certificates of 100 points" in out and "Rob_cs" in out
    assert (tmp_path / "certify.jsonl").exists()
