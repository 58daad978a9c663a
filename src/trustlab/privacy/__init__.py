"""Privacy and indistinguishability. ``trustlab.privacy.dsi``: data-specific indistinguishability
(DSI), the optimal anisotropic Gaussian mechanism and its noise calibration.

Public names are imported from their module on first use, so ``import trustlab.privacy`` stays
cheap.
"""

from __future__ import annotations

from trustlab._lazy import lazy_getattr

# public name -> the module that defines it
_LAZY = {
    "optimal_gaussian_covariance": "trustlab.privacy.dsi",
    "DSICovariance": "trustlab.privacy.dsi",
    "calibrate": "trustlab.privacy.dsi",
    "dsi_epsilon": "trustlab.privacy.dsi",
    "NoiseCalibration": "trustlab.privacy.dsi",
    "DSIMechanism": "trustlab.privacy.dsi",
    "group_gradient_differences": "trustlab.privacy.dsi",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr("trustlab.privacy", _LAZY)
