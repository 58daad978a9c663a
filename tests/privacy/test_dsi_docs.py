"""The docstring examples and the docs page example run and print what they claim."""

import doctest
import re
from pathlib import Path

from trustlab.privacy import calibration, dsi, mechanism, results

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "privacy-dsi.md"


def test_docstring_examples_pass():
    attempted = 0
    for module in (dsi, calibration, mechanism, results):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 5


def test_docs_page_example_runs(capsys):
    code = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), re.S)[0]
    exec(compile(code, str(DOCS_PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert "trace 1.29552" in out
    assert "exact accountant" in out
