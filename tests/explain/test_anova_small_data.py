"""The row count below which ANOVA-TPNN holds no rows out, as the docs state it, is the one the
fit uses (the docs said 67; ceil(0.15 * 61) = 10 validation rows already)."""

import re
from pathlib import Path

import numpy as np
import pytest

from trustlab.explain.anova_tpnn import ANOVATPNN

pytest.importorskip("torch")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "explain-anova-tpnn.md"


def _held_out(n: int) -> int:
    X = np.random.default_rng(0).normal(size=(n, 1))
    return (
        ANOVATPNN(max_epochs=1, random_state=0, n_jobs=1)
        .fit(X, X[:, 0])
        .history_["n_validation_rows"]
    )


def test_the_documented_small_data_threshold_is_the_fits():
    stated = {int(n) for n in re.findall(r"[Bb]elow (\d+) rows", DOCS.read_text())}
    assert len(stated) == 1, stated
    (threshold,) = stated
    assert _held_out(threshold - 1) == 0
    assert _held_out(threshold) == 10
