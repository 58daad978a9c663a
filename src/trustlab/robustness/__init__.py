"""Certified robustness: cost-sensitive randomized smoothing (certify, predict, train).

- ``certificates``: cost matrices, :class:`Certificate`, :class:`DatasetCertificate` and
  :func:`certify_counts` (certificates from counts; ``bounds`` holds the statistics);
- ``classifier``: :class:`SmoothedClassifier` (sampling, prediction, one point's certificate);
- ``runner``: :func:`certify_dataset` (batched, joblib or Dask, resumable checkpoints);
- ``training``: :func:`train_smoothed` (Margin-CS and Gaussian augmentation);
- ``digits``: the bundled digits task, small torch architectures and their model folders.

Importing this package does not import torch: certification of plain numpy callables needs only
numpy and scipy; torch is imported by the functions that train or load torch models.
"""

from trustlab.robustness.bounds import clopper_pearson_lower, clopper_pearson_upper
from trustlab.robustness.certificates import (
    ABSTAIN,
    Certificate,
    DatasetCertificate,
    certify_counts,
    check_cost_matrix,
    make_cost_matrix,
)
from trustlab.robustness.classifier import SmoothedClassifier
from trustlab.robustness.digits import (
    ARCHITECTURES,
    digits_model,
    load_base_model,
    load_digits_split,
    save_base_model,
)
from trustlab.robustness.runner import certify_dataset
from trustlab.robustness.training import METHODS, TrainingResult, train_smoothed

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
    "load_base_model",
    "load_digits_split",
    "make_cost_matrix",
    "save_base_model",
    "train_smoothed",
]
