"""component_stability compares class logits only between models of the same classes."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN, component_stability

pytest.importorskip("torch")


def test_models_with_other_classes_are_refused_naming_the_model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.array(["a"] * 25 + ["b"] * 25 + ["c"] * 10)
    full = ANOVATPNN(order=1, max_epochs=2, random_state=0).fit(X, y)
    # a resample without class "c" (it raised numpy's "all input arrays must have the same shape")
    fewer = ANOVATPNN(order=1, max_epochs=2, random_state=1).fit(X[:50], y[:50])
    with pytest.raises(InputError, match=r"^models\[1\]: expected the classes \['a', 'b', 'c'\]"):
        component_stability([full, fewer], X)
    # as many classes, but another one: its logits were compared with class "c"'s, silently
    other = ANOVATPNN(order=1, max_epochs=2, random_state=1).fit(X, np.where(y == "c", "d", y))
    with pytest.raises(InputError, match=r"^models\[1\]: .*got .*\['a', 'b', 'd'\]"):
        component_stability([full, other], X)
    same = ANOVATPNN(order=1, max_epochs=2, random_state=2).fit(X, y)
    assert component_stability([full, same], X).n_models == 2
