"""Review 53: the PD of a one-hot encoded categorical as a whole (docs/explain-fastpd.md, "A
categorical's partial dependence"): pd_function over all its columns, at rows holding each
category, equals the brute-force average of setting the category in every background row."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from trustlab.explain import FastPD


def _table(n=300):
    rng = np.random.default_rng(4)
    X = pd.DataFrame(
        {
            "age": rng.normal(40, 10, n),
            "town": rng.choice(["north", "south", "east", "west"], n),
        }
    )
    score = (X.town == "north") * 2.0 + (X.town == "east") * (X.age > 40) + X.age / 20
    return X, score + rng.normal(scale=0.3, size=n)


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_pd_of_a_one_hot_categorical_matches_brute_force(kind):
    X, score = _table()
    encode = make_column_transformer((OneHotEncoder(), ["town"]), remainder="passthrough")
    if kind == "regressor":
        model = make_pipeline(encode, RandomForestRegressor(30, max_depth=5, random_state=0))
        model.fit(X, score)
        output = model.predict
    else:
        labels = np.digitize(score, np.quantile(score, [0.33, 0.66]))
        model = make_pipeline(encode, HistGradientBoostingClassifier(max_iter=20)).fit(X, labels)
        output = model.decision_function  # the raw score FastPD decomposes
    background = X[:150]
    explainer = FastPD(model).fit(background)
    # the documented recipe
    town = [f for f in explainer.feature_names_ if f.startswith("onehotencoder__town_")]
    categories = ["east", "north", "south", "west"]
    at = pd.DataFrame({"age": 0.0, "town": categories})  # age: any value, it is not in the subset
    got = explainer.pd_function(at, town)
    expected = [output(background.assign(town=c)).mean(axis=0) for c in categories]
    np.testing.assert_allclose(got, np.array(expected), rtol=0, atol=1e-12)
    # one column alone is a different, off-the-one-hot question (north=1 beside east=1)
    alone = explainer.pd_function(at, "onehotencoder__town_north")
    assert not np.allclose(alone, got)
