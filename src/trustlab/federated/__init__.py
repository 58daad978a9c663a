"""Federated learning. ``trustlab.federated.uefl``: UEFL, uncertainty-based extensible-codebook
federated learning (engine-independent core); :func:`simulate`: the in-process runner against
FedAvg; ``trustlab.federated.flower``: the same protocol as Flower ServerApp and ClientApp.

Public names are imported from their module on first use, so ``import trustlab.federated``
needs neither torch nor flwr.
"""

from __future__ import annotations

from trustlab._lazy import lazy_getattr

# public name -> the module that defines it
_LAZY = {
    "UEFLConfig": "trustlab.federated.uefl",
    "SiloPlan": "trustlab.federated.uefl",
    "SiloState": "trustlab.federated.uefl",
    "SiloUpdate": "trustlab.federated.uefl",
    "SiloEvaluation": "trustlab.federated.uefl",
    "predictive_entropy": "trustlab.federated.uefl",
    "average_weights": "trustlab.federated.uefl",
    "uncertainty_threshold": "trustlab.federated.uefl",
    "select_uncertain": "trustlab.federated.uefl",
    "kmeans_codebook": "trustlab.federated.uefl",
    "is_codebook_key": "trustlab.federated.uefl",
    "initial_weights": "trustlab.federated.uefl",
    "train_silo": "trustlab.federated.uefl",
    "evaluate_silo": "trustlab.federated.uefl",
    "VectorQuantizer": "trustlab.federated.uefl",
    "Silo": "trustlab.federated._data",
    "make_mnist_silos": "trustlab.federated._data",
    "make_silos": "trustlab.federated._data",
    "make_digit_silos": "trustlab.federated._data",
    "ProtocolDriver": "trustlab.federated._protocol",
    "ProtocolState": "trustlab.federated._protocol",
    "InProcessEngine": "trustlab.federated._protocol",
    "simulate": "trustlab.federated._simulate",
    "SimulationResult": "trustlab.federated._simulate",
    "MethodRun": "trustlab.federated._simulate",
}

__all__ = list(_LAZY)

__getattr__ = lazy_getattr("trustlab.federated", _LAZY)
