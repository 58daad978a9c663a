"""The docstring examples and the docs page example run and print what they claim."""

import doctest
import re
from pathlib import Path

import trustlab.safety.polytope.estimator as estimator_module
import trustlab.safety.polytope.results as results_module
import trustlab.safety.polytope.selection as selection_module
import trustlab.safety.prompts as prompts_module
import trustlab.safety.refusal as refusal_module

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "safety-polytope.md"


def test_docstring_examples_pass():
    attempted = 0
    modules = (estimator_module, results_module, selection_module, prompts_module, refusal_module)
    for module in modules:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 18


def test_docs_page_example_runs(capsys):
    code = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), re.S)[0]
    exec(compile(code, str(DOCS_PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert "harm_a (n=150): flagged 97%" in out
    assert "True False" in out
