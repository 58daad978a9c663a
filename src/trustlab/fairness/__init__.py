"""Fairness audits: multiclass disparate conditional prediction (DCP)."""

from trustlab.fairness.dcp import (
    AggregateDCPResult,
    DCPInputs,
    DCPResult,
    LabelBounds,
    MulticlassDCPResult,
    dcp_from_aggregates,
    dcp_from_confusion,
    dcp_inputs,
    multiclass_dcp,
)

__all__ = [
    "AggregateDCPResult",
    "DCPInputs",
    "DCPResult",
    "LabelBounds",
    "MulticlassDCPResult",
    "dcp_from_aggregates",
    "dcp_from_confusion",
    "dcp_inputs",
    "multiclass_dcp",
]
