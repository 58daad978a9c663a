"""The docstring examples of trustlab.watermark and the docs page's Python examples run."""

import doctest
import importlib
import re
from pathlib import Path

import matplotlib
import pytest
import torch

torch.set_num_threads(1)

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "watermark.md"
MODULES = ["vocabulary", "synth", "marks", "export", "nr", "describer", "metrics", "evaluation",
           "backends"]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name):
    module = importlib.import_module(f"trustlab.watermark.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 1, name
    assert result.failed == 0, name


def test_docs_page_examples_run(capsys, tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), re.S)
    assert len(blocks) == 2
    for code in blocks:
        exec(compile(code, str(DOCS_PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert "The watermark visibility is:" in out
    assert "WatermarkDataset: 8 images" in out
    assert "SRCC" in out and "BLEU-1" in out
