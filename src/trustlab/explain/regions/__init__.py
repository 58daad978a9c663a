"""Region-sparse image classification (P2P): classifiers that decide from a few superpixels they show.

The parts: ``data`` (BAM-lite: objects pasted on scenes from images bundled with scikit-image and
scikit-learn, with ground-truth masks), ``segments`` (SLIC and watershed superpixels, cached;
selections as pixel masks), ``selection`` (the selection math of Vandenhirtz and Vogt (ICML 2025):
group pooling, correlated logit-normal logits, relaxed masks, schedules, the sparsity losses,
masks), ``dynamic`` (per-instance sparsity at inference), ``models`` (the tau-conditioned U-Net
selector and the CNN classifier, plain torch), ``estimator`` (:class:`RegionSparseClassifier`),
``baselines`` (the black box and Blackbox-Pixel), ``metrics`` and ``evaluation`` (localisation,
PxAP, deletion and insertion, the spec's tables) and ``checkpoints`` (the shipped models).

Names are imported on first use; ``selection`` and ``dynamic`` need torch, ``data`` and
``segments`` scikit-image (the ``image`` extra).

References
----------
Vandenhirtz, M., Vogt, J. E. (2025). From Pixels to Perception: Interpretable Predictions via
Instance-wise Grouped Feature Selection. ICML 2025.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".data": [
            "ImageDataset",
            "bam_lite",
            "bam_lite_sources",
            "LICENCES",
            "SCENES",
            "DIGIT_CLASSES",
            "SHAPE_CLASSES",
            "scene_photo",
            "digit_images",
        ],
        ".segments": ["superpixels", "segment_sizes", "mask_from_segments", "kept_fraction"],
        ".selection": [
            "TAU_GRID",
            "group_pool",
            "group_covariance",
            "jittered_cholesky",
            "correlated_logits",
            "relaxed_bernoulli",
            "temperature_schedule",
            "lambda_schedule",
            "expected_kept_fraction",
            "kl_sparsity",
            "l1_sparsity",
            "pixel_mask",
            "apply_mask",
            "hard_selection",
        ],
        ".dynamic": ["DynamicTauResult", "dynamic_tau", "dynamic_tau_sequential"],
        ".models": ["Selector", "Classifier", "masked_logits"],
        ".estimator": ["RegionSparseClassifier", "RegionExplanation", "RegionTrainingHistory"],
        ".baselines": ["BlackBoxClassifier"],
        ".evaluation": ["RegionsEvaluation", "evaluate_regions", "DELTAS"],
        ".checkpoints": [
            "CHECKPOINTS",
            "checkpoint_data",
            "checkpoint_info",
            "load_checkpoint",
            "train_checkpoint",
        ],
        ".metrics": [
            "localisation_precision",
            "mask_iou",
            "pxap",
            "pxap_per_image",
            "PXAP_BINS",
            "random_area_masks",
            "pixel_grid_mask",
            "FidelityCurve",
            "deletion_curve",
            "insertion_curve",
        ],
    },
)
