"""EquiGX: relevance propagation for equivariant (e3nn tensor-product) graph networks.

The parts: ``model`` (:class:`TensorFieldNetwork`, an e3nn TFN with save/load), ``relevance``
(:class:`EquiGX` and its :class:`GraphExplanation`: the rule-by-rule relevance propagation of
Ling et al. (ICML 2025), its equivalent modified-backward gradient x input form, the labelled
block variant and contrast output), ``data`` (shapes in noise and the QM9 carbonyl task; numpy
only), ``training`` (:func:`train_tfn`, checkpointed), ``baselines`` (random, gradients, captum
IxG and IG, Grad-CAM, a GNNExplainer-style mask), ``evaluation`` (:func:`evaluate_explanations`:
ground-truth AUROC/AP, fidelity, angular-order ablation) and ``checkpoints`` (the small shipped
networks and the recipe that trains them).

Names are imported on first use; ``model`` and ``relevance`` need torch and e3nn (the ``graph``
extra): a missing package raises ``ConfigError.missing_extra``.

References
----------
Ling, Y., Yu, H., Jiang, Z., Zou, X., Ji, S. (2025). On Explaining Equivariant Graph Networks via
Improved Relevance Propagation. ICML 2025.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".model": ["TensorFieldNetwork", "TFNConfig", "PointGraph"],
        ".relevance": ["EquiGX"],
        ".explanation": ["GraphExplanation"],
        ".training": ["TrainingHistory", "train_tfn", "predict_graphs"],
        ".baselines": ["BASELINES", "baseline_scores"],
        ".evaluation": ["METHODS", "ExplanationEvaluation", "evaluate_explanations"],
        ".checkpoints": [
            "CHECKPOINTS",
            "DATA_SOURCES",
            "load_checkpoint",
            "checkpoint_data",
            "checkpoint_info",
            "recipe_data",
            "train_recipe",
            "train_checkpoint",
        ],
        ".data": [
            "Graph",
            "GraphDataset",
            "shapes_in_noise",
            "qm9_carbonyl",
            "SHAPE_VARIANTS",
            "QM9_ELEMENTS",
        ],
    },
)
