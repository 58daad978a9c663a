"""The evaluation page's accuracy summary names every model at the highest accuracy (fix pass
52d): with p2p_fixed tied at 1.000 it said 'Highest accuracy: p2p_dynamic 1.000' (first wins)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from trustlab.audit.sections.regions import build_page  # noqa: E402
from trustlab.explain.regions import RegionsEvaluation  # noqa: E402


def _evaluation(accuracies):
    rows = tuple(
        {"model": name, "kind": "blackbox", "accuracy": acc, "mean_kept": kept}
        for name, acc, kept in accuracies
    )
    return RegionsEvaluation(
        dataset="hand-made", n_images=4, object_fraction=0.1, accuracy=rows, localisation=(),
        fidelity=(), delta_ablation=(),
    )  # fmt: skip


def _summary(ev):
    return {s.id: s for s in build_page(ev).sections}["accuracy"].summary


def test_every_model_at_the_top_accuracy_is_named():
    ev = _evaluation([("p2p_dynamic", 1.0, 0.2), ("p2p_fixed", 1.0, 0.3), ("bb", 0.75, 1.0)])
    assert _summary(ev) == (
        "Highest accuracy 1.000: p2p_dynamic (mean kept area 0.200), "
        "p2p_fixed (mean kept area 0.300)."
    )


def test_a_single_best_model_is_named_alone():
    ev = _evaluation([("a", 0.5, 0.2), ("b", 0.75, 0.3)])
    assert _summary(ev) == "Highest accuracy 0.750: b (mean kept area 0.300)."
