"""``trustlab audit``: train or load models, audit them, write one self-contained report.

Typical use (see :func:`run_audit` for a runnable example)::

    from trustlab.audit import run_audit

    result = run_audit(out="out")   # bundled chile data, default model zoo
    print(result.summary())         # where out/report.html, report.json, predictions.csv are

Report sections live in :mod:`trustlab.audit.sections`; each receives an :class:`AuditContext`.
"""

from trustlab.audit.context import AuditContext, AuditPlan
from trustlab.audit.result import AuditResult
from trustlab.audit.run import run_audit

__all__ = ["run_audit", "AuditResult", "AuditContext", "AuditPlan"]
