"""One default audit per test session, shared by tests/audit and tests/report.

The conftest.py of both folders loads this file under the one module name MODULE_NAME, so the
(slowest) default audit runs once however the tests are selected.
"""

from __future__ import annotations

MODULE_NAME = "trustlab_tests_shared_audit"
_CACHE: dict = {}


def default_audit(tmp_path_factory):
    """``run_audit()`` on the bundled chile data with the default zoo and seed 0 (cached)."""
    if "result" not in _CACHE:
        from trustlab.audit import run_audit

        _CACHE["result"] = run_audit(out=tmp_path_factory.mktemp("default_audit"), random_state=0)
    return _CACHE["result"]
