"""Review 58 (strat): budgets spanning ~300 orders of magnitude gave a finite training loss but a
NaN gradient; Adam turned it into NaN weights, refused later as an overflow of ``w`` (an argument
the user never gave, with advice to divide it). Now the gradient is checked like the loss and the
refusal names ``budgets``, as docs/strategic-markets.md says."""

import pytest

from trustlab.errors import InputError
from trustlab.strategic import MarketAwareClassifier, make_market_population


def test_overflowing_gradient_is_refused_naming_budgets():
    X, y, b = make_market_population(60, budget_ratio=1e300, random_state=0)
    masc = MarketAwareClassifier(max_epochs=1, n_restarts=1, validation_resamples=0, random_state=0)
    with pytest.raises(InputError, match=r"^budgets: .*gradient of the training loss") as info:
        masc.fit(X, y, budgets=b)
    assert info.value.argument == "budgets"
