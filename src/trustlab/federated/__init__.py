"""Federated learning. ``trustlab.federated.uefl``: UEFL, uncertainty-based extensible-codebook
federated learning (engine-independent core); :func:`simulate`: the in-process runner against
FedAvg; ``trustlab.federated.flower``: the same protocol as Flower ServerApp and ClientApp.

Public names are imported from their module on first use, so ``import trustlab.federated``
needs neither torch nor flwr.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

# module -> the public names it defines
__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".uefl": [
            "UEFLConfig",
            "SiloPlan",
            "SiloState",
            "SiloUpdate",
            "SiloEvaluation",
            "predictive_entropy",
            "average_weights",
            "uncertainty_threshold",
            "select_uncertain",
            "kmeans_codebook",
            "is_codebook_key",
            "initial_weights",
            "train_silo",
            "evaluate_silo",
            "VectorQuantizer",
        ],
        "._data": ["Silo", "make_mnist_silos", "make_silos", "make_digit_silos"],
        "._protocol": ["ProtocolDriver", "ProtocolState", "InProcessEngine"],
        "._simulate": ["simulate", "SimulationResult", "MethodRun"],
    },
)
