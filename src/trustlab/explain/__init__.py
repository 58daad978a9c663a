"""Explanations. Each method is one module: ``trustlab.explain.fastpd`` (partial dependence,
decomposition and SHAP values for tree ensembles) and ``trustlab.explain.anova_tpnn`` (an
interpretable network with a unique functional ANOVA decomposition; needs torch).

Public names are imported from their module on first use, so ``import trustlab.explain`` stays
cheap; a method's module can also be imported directly.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".fastpd": [
            "FastPD",
            "Decomposition",
            "PartialDependence",
            "Importance",
            "plot_shap_summary",
        ],
        ".anova_tpnn": [
            "ANOVATPNN",
            "ComponentValues",
            "ComponentImportance",
            "ComponentGrid",
            "ComponentStability",
            "component_stability",
        ],
    },
)
