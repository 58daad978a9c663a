"""Federated learning: UEFL, uncertainty-based extensible-codebook federated learning.

- ``uefl``: the engine-independent core (settings, uncertainty test, threshold, averaging, one
  silo's training and evaluation); ``model``: the torch network and its optimiser;
- ``silos``: shifted data silos; ``protocol``: the server protocol and the in-process engine;
- ``simulation`` (:func:`simulate_uefl`) and ``results``: UEFL against FedAvg in one process;
- ``flower``: the same protocol as Flower ServerApp, ClientApp and strategy; ``flower_launch``:
  the Flower App project and the processes that run it.

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
            "initial_weights",
            "train_silo",
            "evaluate_silo",
        ],
        ".model": ["VectorQuantizer", "is_codebook_key"],
        ".silos": [
            "Silo",
            "make_mnist_silos",
            "make_silos",
            "make_digit_silos",
            "paper_threshold_factor",
        ],
        ".protocol": ["ProtocolDriver", "ProtocolState", "InProcessEngine"],
        ".simulation": ["simulate_uefl"],
        ".results": ["UEFLSimulation", "MethodRun"],
        ".flower_launch": [
            "FlowerApp",
            "FlowerRunResult",
            "write_flower_app",
            "run_flower_app",
            "run_loopback",
        ],
    },
)
