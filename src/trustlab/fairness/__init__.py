"""Fairness audits: multiclass disparate conditional prediction (DCP).

``trustlab.fairness.dcp`` holds the public functions, ``trustlab.fairness.results`` their results
and ``trustlab.fairness.tables`` the reader of aggregate tables. Public names are imported from
their module on first use, so ``import trustlab.fairness`` stays cheap (the solvers load HiGHS).
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".dcp": ["dcp_from_aggregates", "dcp_from_confusion", "dcp_inputs", "multiclass_dcp"],
        ".results": [
            "AggregateDCPResult",
            "DCPInputs",
            "DCPResult",
            "LabelBounds",
            "MulticlassDCPResult",
        ],
        ".tables": ["AggregateTable", "aggregates_from_table"],
    },
)
