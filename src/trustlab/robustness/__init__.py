"""Certified robustness: cost-sensitive randomized smoothing (certify, predict, train).

Importing this package does not import torch: certification of plain numpy callables needs only
numpy and scipy; torch is imported by the functions that train or load torch models.
"""

from trustlab.robustness._digits import (
    ARCHITECTURES,
    digits_model,
    load_digits_split,
    load_model,
    save_model,
)
from trustlab.robustness._stats import clopper_pearson_lower, clopper_pearson_upper
from trustlab.robustness._train import METHODS, TrainingResult, train_smoothed
from trustlab.robustness.smoothing import (
    ABSTAIN,
    Certificate,
    DatasetCertificate,
    SmoothedClassifier,
    certify_counts,
    certify_dataset,
    check_cost_matrix,
    make_cost_matrix,
)

__all__ = [
    "ABSTAIN",
    "ARCHITECTURES",
    "METHODS",
    "Certificate",
    "DatasetCertificate",
    "SmoothedClassifier",
    "TrainingResult",
    "certify_counts",
    "certify_dataset",
    "check_cost_matrix",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "digits_model",
    "load_digits_split",
    "load_model",
    "make_cost_matrix",
    "save_model",
    "train_smoothed",
]
