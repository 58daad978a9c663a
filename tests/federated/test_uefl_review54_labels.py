"""Own silos whose labels imply far more classes than present: refused before any allocation."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import Silo, simulate_uefl
from trustlab.federated.silos import check_silos

X = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
Y = np.array([0, 1, 0, 1, 0, 1])


def _silos(label, where="train"):
    y = np.array([0, 1, label, 1, 0, 1], dtype=float)
    parts = {"y_train": Y, "y_test": Y, f"y_{where}": y}
    return [Silo(X, Y, X, Y), Silo(X, parts["y_train"], X, parts["y_test"])]


@pytest.mark.parametrize("where", ["train", "test"])
def test_a_label_of_1e10_is_refused_naming_the_silo_and_label(where):
    # it sized the model for 1e10 + 1 classes: torch asked for 2.5 TB (a raw RuntimeError)
    with pytest.raises(InputError, match=rf"silos\[1\]\.y_{where}: .* got the label 10000000000 "):
        check_silos(_silos(1e10, where))
    with pytest.raises(InputError, match=r"at most 10,000 classes or 100 per distinct label"):
        simulate_uefl(_silos(1e10, where), rounds=1, max_iterations=1, mc_passes=2, baselines=())


def test_the_rule_bounds():
    assert check_silos(_silos(9_999))[1].y_train.max() == 9_999  # 10,000 classes: allowed
    with pytest.raises(InputError, match="got the label 10000 among 3 distinct labels"):
        check_silos(_silos(10_000))
    many = np.arange(150)  # with one label beyond: 151 distinct, up to 15,100 classes
    silos = [Silo(np.zeros((150, 2)), many, np.zeros((150, 2)), many)]

    def top(label):
        return [*silos, Silo(np.zeros((2, 2)), [0, label], np.zeros((1, 2)), [0])]

    assert check_silos(top(15_099))[1].y_train.max() == 15_099
    with pytest.raises(InputError, match="got the label 15100 among 151 distinct labels"):
        check_silos(top(15_100))
