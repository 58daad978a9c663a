"""trustlab._numerics.auroc_rows: the one rank-sum AUROC that the polytope selection, the misuse
monitor, the SAE ranking bootstrap and EquiGX's node AUROC share (review 61: four hand-written
copies). Checked against scikit-learn (ties included) and, bit for bit, against the formula the
copies used, so published figures stay the same."""

import warnings

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from trustlab._numerics import auroc_rows


def _tied(rng, m, n):
    return rng.integers(0, 4, (m, n)).astype(float)  # four values: many ties


def _labels(rng, n):
    y = np.arange(n) % 3 == 0
    return y[rng.permutation(n)]


def _old_rows(labels, scores):
    """The copies' formula before review 61 (polytope and monitor ``_auroc_rows``)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1)
    n_pos = int(labels.sum())
    n_neg = len(labels) - n_pos
    return (ranks[:, labels].sum(axis=1) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


@pytest.mark.parametrize("draw", [_tied, lambda rng, m, n: rng.normal(size=(m, n))])
def test_rows_equal_scikit_learn(draw):
    rng = np.random.default_rng(0)
    scores = draw(rng, 30, 41)
    labels = _labels(rng, 41)
    found = auroc_rows(labels, scores)  # one label vector for every row
    expected = [roc_auc_score(labels, row) for row in scores]
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-12)  # sklearn: trapezoids
    per_row = rng.random((30, 41)) < 0.4  # one label vector per row
    expected = [roc_auc_score(p, row) for p, row in zip(per_row, scores, strict=True)]
    np.testing.assert_allclose(auroc_rows(per_row, scores), expected, rtol=0, atol=1e-12)


def test_bit_identical_to_the_former_copies():
    rng = np.random.default_rng(1)
    for n in (2, 7, 50, 301):
        labels = _labels(rng, n)
        labels[0], labels[1] = True, False
        for scores in (_tied(rng, 20, n), rng.normal(size=(20, n)) * 1e300):
            old = _old_rows(labels, scores)
            assert auroc_rows(labels, scores).tobytes() == old.tobytes()
            rows = np.repeat(labels[None, :], 20, axis=0)
            assert auroc_rows(rows, scores).tobytes() == old.tobytes()


def test_one_class_rows_and_nan_scores_give_nan_without_a_warning():
    scores = np.array([[0.1, 0.2, 0.3], [0.3, np.nan, 0.1], [0.5, 0.5, 0.4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = auroc_rows([True, False, False], scores)
        per_row = auroc_rows([[1, 1, 1], [1, 0, 0], [0, 1, 0]], scores)
    np.testing.assert_array_equal(found, [0.0, np.nan, 0.75])
    np.testing.assert_array_equal(per_row, [np.nan, np.nan, 0.75])


def test_the_call_sites_use_the_shared_function():
    # read, not imported: importing the four modules takes ~10 s (torch, sentence embedders)
    import ast
    from pathlib import Path

    import trustlab

    root = Path(trustlab.__file__).parent
    for path in (
        "safety/polytope/selection.py",
        "safety/misuse/monitor.py",
        "interpret/sae/ranking.py",
        "explain/equigx/evaluation.py",
    ):
        tree = ast.parse((root / path).read_text())
        imported = {
            (node.module, alias.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        assert ("trustlab._numerics", "auroc_rows") in imported, path
        assert ("scipy.stats", "rankdata") not in imported, path  # no copy of its own
