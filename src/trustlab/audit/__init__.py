"""``trustlab audit``: train or load models, audit them, write one self-contained report.

Typical use (see :func:`run_audit` for a runnable example)::

    from trustlab.audit import run_audit

    result = run_audit(out="out")   # bundled chile data, default model zoo
    print(result.summary())         # where out/report.html, report.json, predictions.csv are

Report sections live in :mod:`trustlab.audit.sections`; each receives an :class:`AuditContext`.
"""

from trustlab._lazy import lazy_names

# module -> the public names it defines, imported on first use (pandas stays unloaded until then)
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".run": ["run_audit"],
        ".result": ["AuditResult"],
        ".context": ["AuditContext", "AuditPlan"],
    },
)
