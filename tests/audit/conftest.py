import importlib.util
import sys
from pathlib import Path

import pytest

_SHARED = "trustlab_tests_shared_audit"  # the MODULE_NAME of tests/audit/shared_audit.py


def _shared_module():
    if _SHARED not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "audit" / "shared_audit.py"
        spec = importlib.util.spec_from_file_location(_SHARED, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_SHARED] = module
        spec.loader.exec_module(module)
    return sys.modules[_SHARED]


@pytest.fixture(scope="session")
def default_audit(tmp_path_factory):
    """The default chile audit (zoo of three models, seed 0), built once per test session."""
    return _shared_module().default_audit(tmp_path_factory)
