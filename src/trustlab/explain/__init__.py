"""Explanations. Each method is one small package: ``trustlab.explain.fastpd`` (partial
dependence, decomposition and SHAP values for tree ensembles) and ``trustlab.explain.anova_tpnn``
(an interpretable network with a unique functional ANOVA decomposition; needs torch to fit) and
``trustlab.explain.equigx`` (relevance propagation for e3nn equivariant graph networks; needs the
``graph`` extra).

Public names are imported from their package on first use, so ``import trustlab.explain`` stays
cheap; a method's package can also be imported directly.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# package -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".fastpd": [
            "FastPD",
            "Decomposition",
            "PartialDependence",
            "Importance",
            "Explanation",
            "explain_table",
            "plan_table",
            "TablePlan",
            "plot_shap_summary",
        ],
        ".anova_tpnn": [
            "ANOVATPNN",
            "ANOVATPNNSummary",
            "ComponentValues",
            "ComponentImportance",
            "ComponentGrid",
            "ComponentFigures",
            "PredictionTable",
            "ComponentStability",
            "component_stability",
        ],
        ".equigx": [
            "TensorFieldNetwork",
            "TFNConfig",
            "PointGraph",
            "EquiGX",
            "GraphExplanation",
            "Graph",
            "GraphDataset",
            "shapes_in_noise",
            "qm9_carbonyl",
        ],
    },
)
