"""Explanations. Each method is one module: ``trustlab.explain.fastpd`` (partial dependence,
decomposition and SHAP values for tree ensembles) and ``trustlab.explain.anova_tpnn`` (an
interpretable network with a unique functional ANOVA decomposition; needs torch).

Public names are imported from their module on first use, so ``import trustlab.explain`` stays
cheap; a method's module can also be imported directly.
"""

from __future__ import annotations

import importlib

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


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'trustlab.explain' has no attribute {name!r}")
