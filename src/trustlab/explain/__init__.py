"""Explanations. Each method is one module: ``trustlab.explain.fastpd`` (partial dependence,
decomposition and SHAP values for tree ensembles), ...

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
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'trustlab.explain' has no attribute {name!r}")
