"""decision_function / predict_proba of a classifier with no positive weight at a given price:
nobody can buy a move, so the margin is the plain score (it added the reach ``||w|| b / rho``
that no purchase can give, and clipped rejected users to -1e-300, probability 0.5) (review 5)."""

import numpy as np

from trustlab.strategic import NaiveMarketClassifier, make_market_population


def test_no_positive_weight_keeps_the_plain_margin_at_a_given_price():
    X, y, b = make_market_population(300, random_state=0)
    clf = NaiveMarketClassifier().fit(-X, y)  # both weights negative
    assert (clf.coef_ < 0).all()
    users, money = -X[:20], b[:20]
    plain = clf.decision_function(users)
    for price in (0.5, 3.0):
        assert np.array_equal(clf.decision_function(users, money, price=price), plain)
        assert np.allclose(clf.predict_proba(users, money, price=price), clf.predict_proba(users))
        decisions = clf.predict(users, money, price=price)
        assert np.array_equal(decisions, clf.classes_[(plain >= 0).astype(int)])
