"""The docstring examples and the docs page example run and print what they claim."""

import doctest
import re
from pathlib import Path

import torch

import trustlab.strategic.learners as learners_module
import trustlab.strategic.market as market_module
import trustlab.strategic.simulation as simulation_module

torch.set_num_threads(1)

DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "strategic-markets.md"


def test_docstring_examples_pass():
    for module, least in ((market_module, 6), (learners_module, 3), (simulation_module, 3)):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted >= least, module.__name__
        assert result.failed == 0, module.__name__


def test_docs_page_example_runs(capsys):
    code = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), re.S)[0]
    exec(compile(code, str(DOCS_PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert "Market price 1 per unit distance: 3 of 4 users buy" in out
    scores = {}
    for line in out.splitlines():
        if line.startswith(("naive,", "MASC,")):
            name, value = line.rsplit(":", 1)
            scores[" ".join(name.split())] = float(value)
    # Seed 0 (a choosing seed): the naive model loses 0.216 to the market; MASC's margin over it
    # was 0.230-0.286 (mean 0.248, sd 0.015) over twelve float paths (features + 1e-12 noise).
    assert scores["naive, no market"] > scores["naive, market"] + 0.1
    assert scores["MASC, market"] > scores["naive, market"] + 0.15
