"""Importance / Decomposition check their counts k and top (review 65).

top_interactions(-1) silently left out the weakest pair and top_features(-1) the last feature;
plot(top=-1) dropped a bar, top=2.5 gave a raw TypeError and top=-40 matplotlib's
'figure size must be positive'.
"""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from trustlab.errors import InputError
from trustlab.explain.fastpd import Decomposition, Importance

NAMES = ("a", "b", "c")
COMPONENTS = {
    (): np.zeros(2),
    (0,): np.array([1.0, -1.0]),
    (1,): np.array([0.5, 0.5]),
    (0, 1): np.array([0.3, -0.3]),
    (0, 2): np.array([0.2, 0.2]),
    (1, 2): np.array([0.1, -0.1]),
}
DEC = Decomposition(COMPONENTS, NAMES, ("prediction",), "prediction", 2, True, 5)
IMP = Importance.from_values(np.array([[1.0, 0.5, 0.2], [-1.0, 0.5, 0.0]]), DEC)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_counts_must_be_positive_ints(bad):
    with pytest.raises(InputError, match="k: expected an integer >= 1"):
        IMP.top_interactions(bad)
    with pytest.raises(InputError, match="k: expected an integer >= 1"):
        IMP.top_features(bad)
    for kind in ("shap", "components"):
        with pytest.raises(InputError, match="top: expected an integer >= 1"):
            IMP.plot(ax=Figure().add_subplot(), kind=kind, top=bad)
    with pytest.raises(InputError, match="top: expected an integer >= 1"):
        DEC.plot(ax=Figure().add_subplot(), top=bad)


def test_good_counts_keep_their_meaning():
    assert [p for p, _ in IMP.top_interactions(2)] == [("a", "b"), ("a", "c")]
    assert len(IMP.top_interactions(10)) == 3
    assert IMP.top_features(np.int64(2)) == ["a", "b"]
    assert len(DEC.plot(ax=Figure().add_subplot(), top=2).patches) == 2
