"""Explanations. Each method is one module: ``trustlab.explain.fastpd`` (partial dependence,
decomposition and SHAP values for tree ensembles) and ``trustlab.explain.anova_tpnn`` (an
interpretable network with a unique functional ANOVA decomposition; needs torch).

Public names are imported from their module on first use, so ``import trustlab.explain`` stays
cheap; a method's module can also be imported directly.
"""

from __future__ import annotations

from trustlab._lazy import lazy_getattr

# public name -> the module that defines it
_LAZY = {
    "FastPD": "trustlab.explain.fastpd",
    "Decomposition": "trustlab.explain.fastpd",
    "PartialDependence": "trustlab.explain.fastpd",
    "Importance": "trustlab.explain.fastpd",
    "plot_shap_summary": "trustlab.explain.fastpd",
    "ANOVATPNN": "trustlab.explain.anova_tpnn",
    "ComponentValues": "trustlab.explain.anova_tpnn",
    "ComponentImportance": "trustlab.explain.anova_tpnn",
    "ComponentGrid": "trustlab.explain.anova_tpnn",
    "ComponentStability": "trustlab.explain.anova_tpnn",
    "component_stability": "trustlab.explain.anova_tpnn",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr("trustlab.explain", _LAZY)
