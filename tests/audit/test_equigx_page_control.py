"""The EquiGX page's fidelity table says 'control' for the random method: since
evaluate_explanations reports its gap as None (random deletion is the control the gap is
measured against), the cell read 'n/a', as if the gap were missing."""

from trustlab.audit.sections.equigx import build_page
from trustlab.explain.equigx import ExplanationEvaluation
from trustlab.report import Table


def _evaluation():
    auroc = {"estimate": 0.7, "low": 0.6, "high": 0.8, "n": 4}
    return ExplanationEvaluation(
        dataset="toy",
        n_graphs=4,
        n_explained=4,
        accuracy=0.75,
        methods=("equigx", "random"),
        fraction=0.2,
        confidence_level=0.95,
        auroc={"equigx": auroc, "random": dict(auroc, estimate=0.5, low=0.4, high=0.6)},
        average_precision={"equigx": {"estimate": 0.6}, "random": {"estimate": 0.4}},
        accuracy_after_deletion={"equigx": 0.25, "random": 0.5},
        fidelity_gap={"equigx": 0.25, "random": None},
        order_accuracy={0: 0.5},
        relevance_parts={},
        seconds_per_graph={"equigx": 0.01, "random": 0.001},
    )


def test_the_random_method_gap_cell_says_control():
    page = build_page(_evaluation())
    table = next(b for b in page.sections[0].blocks if isinstance(b, Table))
    gap = table.columns.index("fidelity gap")
    cells = {row[0]: row[gap] for row in table.rows}
    assert cells == {"equigx": 0.25, "random": "control"}
    assert page.sections[0].data["fidelity_gap"]["random"] is None
