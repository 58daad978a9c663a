"""``make`` keeps the byte code of what the suite imports (stops 61 and 63).

Where PYTHONDONTWRITEBYTECODE is set (this machine; CI ran 1,583 s of its 1,500 s after stop 60
installed with pip's --no-compile) Python never writes a .pyc: every fresh interpreter the suite
starts (the background worker, subprocess tests, process-pool workers) compiled torch,
scikit-learn and trustlab from source again. Stop 61 byte-compiled the whole environment after
installing (78 s of CPU for ~37,000 files); since stop 63 make's commands run with the variable
removed, so each module is compiled once, by its first importer, and its .pyc kept. Checked only
where this rule applies: a run that make started (MAKELEVEL set) in the ``.venv`` it built.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"

pytestmark = pytest.mark.skipif(
    "MAKELEVEL" not in os.environ
    or Path(sys.prefix).resolve() != VENV.resolve()
    or not (VENV / ".installed").exists(),
    reason="runs under make, in the .venv that make built (its stamp .venv/.installed)",
)


def test_make_runs_python_with_byte_code_writing_on():
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
    assert not sys.dont_write_bytecode


@pytest.mark.parametrize(
    "module", ["torch", "transformers", "sklearn.base", "pandas", "trustlab.cli", "background_jobs"]
)
def test_what_the_suite_imported_keeps_its_byte_code(module):
    importlib.import_module(module)
    origin = importlib.util.find_spec(module).origin
    cached = Path(importlib.util.cache_from_source(origin))
    assert cached.exists(), f"{module}: no {cached.name} beside {origin}"
