"""docs/evaluation-ranking.md's values of rho for 3 models, ties included.

The page said 3 models "allow only the values -1, -0.5, 0.5 and 1 for rho"; where accuracies
(or scores) tie, rho also takes -0.87, 0 and 0.87 (average ranks, as scipy's spearmanr).
"""

import itertools
from pathlib import Path

import numpy as np

from trustlab.evaluation import rank_models
from trustlab.evaluation._correlation import spearman_rows


def test_the_page_lists_every_value_rho_takes_for_three_models():
    patterns = np.array(list(itertools.product(range(3), repeat=3)), dtype=float)
    x = np.repeat(patterns, len(patterns), axis=0)
    y = np.tile(patterns, (len(patterns), 1))
    rho = spearman_rows(x, y)
    values = sorted(set(np.round(rho[~np.isnan(rho)], 2).tolist()))
    assert values == [-1.0, -0.87, -0.5, 0.0, 0.5, 0.87, 1.0]
    page = (Path(__file__).resolve().parents[2] / "docs" / "evaluation-ranking.md").read_text()
    text = " ".join(page.split())
    assert (
        "3 models allow only the values -1, -0.5, 0.5 and 1 for rho, and -0.87, 0 and 0.87 "
        "besides where scores or accuracies tie" in text
    )


def test_tied_accuracies_of_three_models_give_rho_0_87():
    labels = np.array([0, 0, 1, 1])
    sharp = np.array([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.1]])  # 3 of 4 right
    middle = np.array([[0.7, 0.3], [0.7, 0.3], [0.3, 0.7], [0.7, 0.3]])  # 3 of 4 right
    vague = np.array([[0.6, 0.4], [0.4, 0.6], [0.4, 0.6], [0.6, 0.4]])  # 2 of 4 right
    result = rank_models(
        {"sharp": sharp, "middle": middle, "vague": vague}, labels=labels, n_bootstrap=0
    )
    assert result.accuracy.tolist() == [0.75, 0.75, 0.5]
    assert round(result.spearman, 2) == 0.87
