"""The chile market's education feature is ordinal: primary < secondary < post-secondary (the
table's codes P, S, PS; the alphabetical P, PS, S put post-secondary between the other two)."""

import numpy as np

from trustlab.data import load_dataset
from trustlab.strategic import load_market_data


def test_education_is_coded_in_its_real_order():
    data = load_market_data("chile")
    frame = load_dataset("chile").frame.dropna(
        subset=["statusquo", "age", "education", "sex", "population", "income", "vote"]
    )
    column = data.X[:, 2]
    codes = frame["education"].to_numpy()
    for level, value in (("P", 0.0), ("S", 1.0), ("PS", 2.0)):
        assert (codes == level).any()
        assert np.all(column[codes == level] == value), level
