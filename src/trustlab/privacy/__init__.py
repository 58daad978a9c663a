"""Privacy and indistinguishability. ``trustlab.privacy.dsi``: data-specific indistinguishability
(DSI), the optimal anisotropic Gaussian mechanism and its noise calibration.

Public names are imported from their module on first use, so ``import trustlab.privacy`` stays
cheap.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".dsi": [
            "optimal_gaussian_covariance",
            "DSICovariance",
            "calibrate",
            "dsi_epsilon",
            "NoiseCalibration",
            "DSIMechanism",
            "group_gradient_differences",
        ],
    },
)
