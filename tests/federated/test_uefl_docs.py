"""The docstring examples and the docs page example run and print what they claim."""

import doctest
import re
from pathlib import Path

import pytest

import trustlab.federated._data as data_module
import trustlab.federated._simulate as simulate_module
import trustlab.federated.flower as flower_module
import trustlab.federated.uefl as uefl_module

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "federated-uefl.md"


@pytest.mark.parametrize(
    ("module", "minimum"),
    [(uefl_module, 5), (data_module, 2), (simulate_module, 1), (flower_module, 1)],
)
def test_docstring_examples_pass(module, minimum):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= minimum
    assert result.failed == 0


def test_docs_page_example_runs(capsys):
    code = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), re.S)[0]
    namespace = {}
    exec(compile(code, str(DOCS_PAGE), "exec"), namespace)
    out = capsys.readouterr().out
    assert "UEFL simulation: 3 silos" in out and "get codebook 1" in out
    assert "entropy_extended" in out
    assert namespace["ax"].get_ylabel().startswith("predictive entropy")
