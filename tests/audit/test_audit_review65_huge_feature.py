"""Review 65: a feature of magnitude 1e200 ended ``trustlab audit`` in scikit-learn's raw
'Input X contains NaN' (exit 1) after training had started, and one of 1e160 was silently left
unscaled (StandardScaler's variance overflows, it divides by 1: logistic regression at chance,
0.495 accuracy instead of 0.90 on 400 rows). Now an InputError naming data and the column."""

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import StandardScaler

from trustlab.audit import run_audit
from trustlab.audit.models import make_preprocessor
from trustlab.errors import InputError


def _table(scale: float) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"y": [0, 1] * 20, "g": ["u", "u", "v", "v"] * 10, "x": rng.normal(size=40),
                         "big": rng.normal(size=40) * scale})  # fmt: skip


def test_a_feature_too_large_to_scale_is_named(tmp_path):
    with pytest.raises(InputError) as info:
        run_audit(_table(1e200), label="y", group="g", out=tmp_path / "out",
                  models=["logistic_regression"])  # fmt: skip
    assert info.value.argument == "data"
    assert "got 'big' with numbers up to" in str(info.value)
    assert str(info.value).endswith("(--exclude big)")
    assert not (tmp_path / "out").exists()


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # the oracle's own fit
@pytest.mark.parametrize("scale", [1e150, 1e153, 1e154, 1e160])
def test_refused_exactly_where_standard_scaler_stops_scaling(scale):
    X = _table(scale)[["x", "big"]]
    fitted = StandardScaler().fit(X[["big"]]).scale_[0]
    scales = np.isfinite(fitted) and fitted != 1.0  # the oracle: sklearn's own scale
    try:
        make_preprocessor(X)
        refused = False
    except InputError:
        refused = True
    assert refused != scales
