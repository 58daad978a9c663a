"""The training summary counts training and validation graphs apart: '130 graphs (30 for
validation)' read as 30 of the 130 though result.json has n_train 130 and n_validation 30."""

from __future__ import annotations

from trustlab.explain.equigx import TrainingHistory


def test_training_summary_names_training_and_validation_graphs_apart():
    history = TrainingHistory(
        dataset="shapes", n_train=130, n_validation=30, epochs=(1, 2), train_loss=(0.9, 0.5),
        train_accuracy=(0.5, 0.8), validation_accuracy=(0.4, 0.7), best_epoch=2,
        best_validation_accuracy=0.7, seconds=3.0,
    )  # fmt: skip
    first = history.summary().splitlines()[0]
    assert first.startswith("TFN training on shapes: 130 training and 30 validation graphs, ")
    assert history.to_dict()["n_train"] == 130 and history.to_dict()["n_validation"] == 30
