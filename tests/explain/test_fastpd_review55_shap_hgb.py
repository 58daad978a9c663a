"""docs/explain-fastpd.md, "shap disagreements found while testing": shap 0.51's interventional
TreeExplainer misreads HistGradientBoosting models, while FastPD matches the model's own
brute-force averages.

Review 55 measured on the data below (300 rows of 4 normal features, HistGradientBoostingRegressor
with 10 trees of the default size, background rows 0-29, explained rows 200-209), seeds 0, 1, 2:
shap's rows miss the model's prediction minus the mean by 0.117, 0.069 and 0.057, and its SHAP
values differ from FastPD's by 0.092, 0.036 and 0.037; FastPD's rows by 5e-16 at most, and FastPD
equals the exhaustive Shapley average over the background to 3e-16. The thresholds (0.02 and
1e-9) sit far from both sides.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from trustlab.explain import FastPD

shap = pytest.importorskip("shap")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "explain-fastpd.md"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shap_misreads_histgradientboosting_where_fastpd_matches_the_model(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.normal(size=300)
    model = HistGradientBoostingRegressor(max_iter=10).fit(X, y)
    background, rows = X[:30], X[200:210]
    masker = shap.maskers.Independent(background, max_samples=len(background))
    explainer = shap.TreeExplainer(model, data=masker, feature_perturbation="interventional")
    theirs = np.asarray(explainer.shap_values(rows, check_additivity=False))
    ours = FastPD(model).fit(background).shap_values(rows)
    target = model.predict(rows) - model.predict(background).mean()
    assert np.abs(ours.sum(axis=1) - target).max() <= 1e-9
    assert np.abs(theirs.sum(axis=1) - target).max() > 0.02
    assert np.abs(ours - theirs).max() > 0.02


def test_the_docs_name_the_histgradientboosting_disagreement():
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    start = text.index("**shap disagreements found while testing**")
    bullet = text[start : text.index("- glex's", start)]
    assert "HistGradientBoosting" in bullet
    assert "test_fastpd_review55_shap_hgb.py" in bullet
