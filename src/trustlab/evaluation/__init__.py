"""Model evaluation without labels: rank models on new data by their own uncertainty.

``scores`` (per-item statistics, TokenLogProbs) · ``ranking`` (rank_models) · ``results``
(RankingResult) · ``statistics`` (tests, cluster bootstrap, power and sample sizes shared by the
evaluations); the bootstrap, the rank correlations, the temperature scaling and the
calibration caveat are private kernels beside them. Public names are imported on first use.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".scores": ["SCORES", "TOKEN_POSITIONS", "TokenLogProbs", "item_scores"],
        ".ranking": ["rank_models"],
        ".results": ["RankingResult"],
        ".statistics": [
            "SignificanceTest",
            "ItemTests",
            "ClusterInterval",
            "SampleSize",
            "two_proportion_ztest",
            "per_item_ztests",
            "wilcoxon_signed_rank",
            "mcnemar_test",
            "PairedComparison",
            "paired_comparison",
            "wilson_interval",
            "cluster_bootstrap_ci",
            "cohens_h",
            "normal_power",
            "normal_sample_size",
            "sample_size",
            "achieved_power",
        ],
    },
)
