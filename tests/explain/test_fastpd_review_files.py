"""Every PD curve gets its own file (review: features ``a/b`` and ``a_b`` both became
``pd_a_b.png`` and one plot was silently lost)."""

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

from trustlab.explain import FastPD


def test_features_whose_file_names_collide_get_one_file_each():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(120, 4)), columns=["a/b", "a_b", "A_B", "c"])
    model = RandomForestRegressor(5, max_depth=3, random_state=0)
    model.fit(frame, frame["a/b"] + frame["a_b"] - frame["A_B"])
    explanation = FastPD(model).fit(frame[:60]).explain(frame[60:], features=["a/b", "a_b", "A_B"])
    names = [n for n in explanation.files() if n.startswith("pd_")]
    assert names == ["pd_a_b.png", "pd_a_b-2.png", "pd_A_B-3.png"]
