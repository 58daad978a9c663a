"""The audit's FastPD section on a user's Pipeline whose steps are not named prep/model (review F2).

``make_pipeline`` names its steps after their classes; the section used to unpack only steps
named ``prep`` and ``model``, so such a Pipeline was left out (text columns) or the section failed
(its transform given NumPy rows).
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fastpd as section
from trustlab.explain import FastPD

RNG = np.random.default_rng(0)
N = 200
FRAME = pd.DataFrame(
    {
        "age": RNG.normal(40, 10, N),
        "income": RNG.normal(size=N),
        "town": RNG.choice(["a", "b", "c"], N),
    }
)
LABEL = np.where(FRAME.age + 10 * (FRAME.town == "a") + RNG.normal(0, 5, N) > 45, "yes", "no")
GROUP = RNG.choice(["f", "m"], N)


def context(pipe, X):
    return AuditContext(
        dataset="t",
        label="y",
        group="g",
        labels=np.unique(LABEL),
        feature_names=list(X.columns),
        X_train=X.iloc[:0],
        X_test=X,
        y_train=LABEL[:0],
        y_test=LABEL,
        g_train=GROUP[:0],
        g_test=GROUP,
        models={"pipe": pipe},
        random_state=0,
    )


@pytest.mark.parametrize(
    "columns, encoder",
    [
        (["age", "income", "town"], lambda: OneHotEncoder()),
        (["age", "income"], lambda: StandardScaler()),
    ],
)
def test_a_make_pipeline_model_is_explained_through_its_transform(columns, encoder, monkeypatch):
    monkeypatch.setattr(section, "BACKGROUND_ROWS", N)  # every row: comparable with FastPD
    monkeypatch.setattr(section, "EXPLAINED_ROWS", N)
    X = FRAME[columns]
    encoded = ["town"] if "town" in columns else ["age"]
    transform = make_column_transformer((encoder(), encoded), remainder="passthrough")
    pipe = make_pipeline(transform, GradientBoostingClassifier(n_estimators=20, random_state=0))
    pipe.fit(X, LABEL)
    built = section.build(context(pipe, X))
    assert built is not None and set(built.data) == {"pipe"}
    data = built.data["pipe"]
    names = [n.split("__", 1)[-1] for n in pipe[:-1].get_feature_names_out()]
    assert list(data["mean_abs_shap"]) == names
    direct = FastPD(pipe).fit(X)  # FastPD's own Pipeline support, on the same rows
    np.testing.assert_allclose(data["expected_value"], [direct.expected_value_], atol=1e-12)
    importance = direct.importance(X)
    np.testing.assert_allclose(
        np.ravel(list(data["mean_abs_shap"].values())), importance.shap[:, 0], atol=1e-12
    )


def intro(built) -> str:
    return next(b.text for b in built.blocks if b.text.startswith("Model pipe:"))


def test_the_intro_names_where_the_background_comes_from():
    """Review F3: a --model audit has no training rows; its background is drawn from the
    audited rows, and the intro must not call them training rows."""
    X = FRAME[["age", "income"]]
    pipe = make_pipeline(StandardScaler(), GradientBoostingClassifier(n_estimators=5))
    pipe.fit(X, LABEL)
    text = intro(section.build(context(pipe, X)))
    assert "training rows" not in text
    assert "150 audited rows, with 150 audited rows as background" in text
    with_training = replace(context(pipe, X), X_train=X.iloc[:50], y_train=LABEL[:50])
    text = intro(section.build(with_training))
    assert "150 test rows, with 50 training rows as background" in text
