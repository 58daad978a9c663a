"""The result of :func:`trustlab.audit.run_audit`: the report, the files written, the headline
numbers and the warnings on the data."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trustlab._results import Result
from trustlab.audit.context import AuditContext
from trustlab.audit.group_metrics import equalized_odds_caveat, largest_equalized_odds
from trustlab.audit.sections.overview import unheld_warning
from trustlab.report import Report

__all__ = ["AuditResult"]


@dataclass(frozen=True)
class AuditResult(Result):
    """What :func:`run_audit` made: the report, where it and the other files were written, and
    the audit context.

    ``predictions_path`` is ``out/predictions.csv``; ``model_paths`` maps each model the audit
    trained to its ``out/models/<name>.skops`` file (empty when no model was trained here).
    """

    report: Report
    html_path: Path
    json_path: Path
    context: AuditContext = field(repr=False)
    predictions_path: Path | None = None
    model_paths: dict[str, Path] = field(default_factory=dict)

    def headline(self) -> dict[str, dict[str, Any]]:
        """Per model: accuracy, balanced accuracy, the DCP bounds and the largest demographic
        parity and equalized odds differences over the classes, where the sections have them."""
        data = {s.id: s.data for s in self.report.sections}
        overview = data.get("overview", {}).get("models", {})
        fairness = data.get("fairness", {}).get("models", {})
        group_metrics = data.get("fairness", {}).get("group_metrics", {}).get("models", {})
        headline = {}
        for name in self.context.predictions:
            scores = overview.get(name, {})
            dcp = fairness.get(name, {})
            classes = group_metrics.get(name, {})
            headline[name] = {
                "accuracy": scores.get("accuracy"),
                "balanced_accuracy": scores.get("balanced_accuracy"),
                "dcp_lower": dcp.get("lower"),
                "dcp_upper": dcp.get("upper"),
                "dcp_aggregate": dcp.get("aggregate_estimate"),
                "demographic_parity_difference": _worst(classes, "demographic_parity_difference"),
                "equalized_odds_difference": _worst(classes, "equalized_odds_difference"),
                "equalized_odds_difference_source": largest_equalized_odds(classes),
            }
        return headline

    def warnings(self) -> list[str]:
        """The audit's warnings on the data in one line each (a class predicted that no row's
        label holds, e.g. 'Review' for 'review'), as the terminal summary and ``--json`` give
        them; the page says more."""
        overview = next((s.data for s in self.report.sections if s.id == "overview"), None)
        if overview is None:  # a report without the overview holds them in its meta
            return list(self.report.meta.get("warnings", []))
        return unheld_warning(overview)

    def _dict_items(self) -> dict:
        """The file paths, the sections' status and the headline numbers."""
        return {
            "html_path": str(self.html_path),
            "json_path": str(self.json_path),
            "predictions_path": None
            if self.predictions_path is None
            else str(self.predictions_path),
            "model_paths": {name: str(path) for name, path in self.model_paths.items()},
            "dataset": self.context.dataset,
            "label": self.context.label,
            "group": self.context.group,
            "mode": self.context.mode,
            "sections": [
                {"id": s.id, "status": s.status, "error": s.error} for s in self.report.sections
            ],
            "headline": self.headline(),
            "warnings": self.warnings(),
            "notes": list(self.context.notes),
        }

    def summary(self) -> str:
        ctx = self.context
        failed = [s.id for s in self.report.sections if s.status == "failed"]
        lines = [
            f"Audit of {ctx.dataset} (label {ctx.label!r}, group {ctx.group!r}): "
            f"{len(ctx.predictions)} model(s), {len(self.report.sections)} section(s)"
            + (f", failed: {', '.join(failed)}" if failed else ""),
            f"  report: {self.html_path}",
            f"  data:   {self.json_path}",
        ]
        if self.predictions_path is not None:
            lines.append(f"  predictions: {self.predictions_path}")
        if self.model_paths:
            folder = next(iter(self.model_paths.values())).parent
            lines.append(f"  models: {folder} ({len(self.model_paths)} skops files)")
        for name, numbers in self.headline().items():
            parts = []
            if numbers["accuracy"] is not None:
                balanced = numbers["balanced_accuracy"]  # a rare class never predicted: ~0.5
                parts.append(f"accuracy {numbers['accuracy']:.3f} (balanced {balanced:.3f})")
            if numbers["dcp_lower"] is not None and numbers["dcp_upper"] is not None:
                parts.append(f"DCP in [{numbers['dcp_lower']:.4f}, {numbers['dcp_upper']:.4f}]")
            if numbers["equalized_odds_difference"] is not None:
                parts.append(
                    "equalized odds difference"
                    + (" (largest over the classes)" if len(ctx.labels) > 2 else "")
                    + f" {numbers['equalized_odds_difference']:.4f}"
                    + equalized_odds_caveat(
                        numbers["equalized_odds_difference_source"], len(ctx.labels) > 2
                    )
                )
            lines.append(f"  {name}: " + (", ".join(parts) or "no numbers"))
        lines.extend(f"  warning: {line}" for line in self.warnings())
        lines.extend(f"  note: {note}" for note in ctx.notes)  # the overview's notes on the data
        return "\n".join(lines)


def _worst(classes: dict, metric: str) -> float | None:
    values = [c[metric]["estimate"] for c in classes.values() if c.get(metric)]
    values = [v for v in values if v is not None]
    return max(values) if values else None
