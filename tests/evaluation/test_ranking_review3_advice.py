"""The calibration warning advises temperature scaling only where none was done, and the CLI
says its option (tests/cli/test_evaluate_cli.py)."""

import numpy as np

from trustlab.evaluation import rank_models

ADVICE = "fit temperatures on a small labelled slice"


def poorly_ranked_zoo():
    """Three models of differing calibration that rank poorly with and without temperatures."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, 30)
    outputs = {
        m: rng.dirichlet(np.ones(3) * c, size=30) for m, c in [("a", 0.5), ("b", 2), ("c", 8)]
    }
    return outputs, labels


def test_the_warning_advises_temperatures_only_before_they_are_fitted():
    outputs, labels = poorly_ranked_zoo()
    plain = rank_models(outputs, labels=labels, n_bootstrap=0)
    assert any(ADVICE in text for text in plain.warnings)
    scaled = rank_models(outputs, labels=labels, calibration_size=10, n_bootstrap=0, random_state=0)
    assert scaled.temperatures is not None and scaled.spearman < 0.5 and scaled.warnings
    assert not any(ADVICE in text for text in scaled.warnings)
    assert any("temperatures fitted on the labelled slice" in text for text in scaled.warnings)
