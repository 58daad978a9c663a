"""Privacy and indistinguishability: data-specific indistinguishability (DSI), the optimal
anisotropic Gaussian mechanism and its noise calibration.

``dsi`` (optimal_gaussian_covariance, dsi_noise, group_gradient_differences) · ``calibration``
(calibrate, dsi_epsilon) · ``mechanism`` (DSIMechanism, the black-box estimator) · ``results``
(DSICovariance, NoiseCalibration, DSINoise); the dual solver and the accountants are private
kernels beside them. Public names are imported from their module on first use, so
``import trustlab.privacy`` stays cheap.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".dsi": ["optimal_gaussian_covariance", "dsi_noise", "group_gradient_differences"],
        ".calibration": ["calibrate", "dsi_epsilon"],
        ".mechanism": ["DSIMechanism"],
        ".results": ["DSICovariance", "NoiseCalibration", "DSINoise"],
    },
)
