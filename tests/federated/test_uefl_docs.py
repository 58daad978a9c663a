"""The docstring examples and the docs page example run and print what they claim."""

import doctest
import re
from pathlib import Path

import pytest

import trustlab._adam as adam_module
import trustlab.federated.flower_launch as launch_module
import trustlab.federated.model as model_module
import trustlab.federated.silos as silos_module
import trustlab.federated.simulation as simulation_module
import trustlab.federated.uefl as uefl_module

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "federated-uefl.md"


@pytest.mark.parametrize(
    ("module", "minimum"),
    [
        (uefl_module, 5),
        (model_module, 1),
        (adam_module, 5),  # Adam's example, in trustlab.federated.model until 76b2bff3
        (silos_module, 3),
        (simulation_module, 1),
        (launch_module, 2),
    ],
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
