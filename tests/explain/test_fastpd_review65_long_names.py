"""A PD plot of a feature with a long name gets a file name the file system takes (review 65).

A 293-character column name (a survey question) made `trustlab explain fastpd` stop with
"unexpected failure: OSError: [Errno 36] File name too long" after shap_values.csv was written.
"""

import numpy as np
from sklearn.tree import DecisionTreeRegressor

from trustlab.explain import FastPD

QUESTION = "How satisfied were you overall with the service you received from our team? " * 4
NAMES = [QUESTION + "(first visit)", QUESTION + "(second visit)", "é" * 200]


def test_pd_file_names_stay_short_and_distinct():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X.sum(axis=1))
    explanation = FastPD(model, feature_names=NAMES).fit(X).explain(X[:5], features=NAMES)
    names = [n for n in explanation.files() if n.startswith("pd_")]
    assert len(names) == 3 and len({n.casefold() for n in names}) == 3
    assert all(len(n.encode("utf-8")) <= 120 for n in names), names
    assert names[0].startswith("pd_How_satisfied_were_you") and names[1].endswith("-2.png")
    assert names[2] == "pd_" + "é" * 50 + ".png"
