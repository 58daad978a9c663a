"""Review 4: a learner's market of a DataFrame keeps the features' names, as market_price does;
simulate_market refuses a seed scikit-learn's split cannot take (it failed inside
train_test_split: 'unexpected failure' in the CLI, exit 1)."""

import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.strategic import (
    NaiveMarketClassifier,
    make_market_population,
    market_price,
    simulate_market,
)


def test_learner_market_of_a_dataframe_names_the_features():
    X, y, b = make_market_population(100, random_state=0)
    frame = pd.DataFrame(X, columns=["income", "tenure"])
    clf = NaiveMarketClassifier().fit(frame, y, budgets=b)
    res = clf.market(frame, b, y)
    assert res.feature_names == ["income", "tenure"]
    assert res.to_dict()["feature_names"] == ["income", "tenure"]
    direct = market_price(clf.coef_, clf.intercept_, frame, b, y=y)
    assert res.price == direct.price and res.feature_names == direct.feature_names
    with pytest.warns(UserWarning, match="does not have valid feature names"):  # scikit-learn's
        assert "feature_names" not in clf.market(X, b).to_dict()  # an array: no names


def test_simulate_market_refuses_a_seed_beyond_the_split_range():
    with pytest.raises(
        InputError, match=r"random_state: expected an integer seed in \[0, 4294967295\]"
    ):
        simulate_market(n_samples=40, max_epochs=1, random_state=2**32)
