"""``make venv`` leaves what the suite imports byte-compiled (stop 61).

Where PYTHONDONTWRITEBYTECODE is set (this machine; CI ran 1,583 s of its 1,500 s after stop 60
installed with pip's --no-compile) Python never writes a .pyc: every fresh interpreter the suite
starts (the background worker, subprocess tests, process-pool workers) compiled torch,
scikit-learn and trustlab from source again. The Makefile now byte-compiles the environment, src
and tests after installing. Checked only in the environment ``make`` built (``.venv`` with its
stamp), where this rule applies.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"


@pytest.mark.skipif(
    Path(sys.prefix).resolve() != VENV.resolve() or not (VENV / ".installed").exists(),
    reason="runs in the .venv that make built (its stamp .venv/.installed)",
)
@pytest.mark.parametrize(
    "module", ["torch", "transformers", "sklearn.base", "pandas", "trustlab.cli", "background_jobs"]
)
def test_make_venv_byte_compiles_what_fresh_interpreters_import(module):
    origin = importlib.util.find_spec(module).origin
    cached = Path(importlib.util.cache_from_source(origin))
    assert cached.exists(), f"{module}: no {cached.name} beside {origin}"
