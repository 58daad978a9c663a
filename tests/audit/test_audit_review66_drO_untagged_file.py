"""A model file holding a classifier without scikit-learn's tags is loaded and audited
(diff review 66 O of 18ba053d).

18ba053d says objects without scikit-learn tags (a plain ``predict``) are audited as before, and
trusts them in its new kind check; but ``load_classifier`` never got that far for one with a
``fit``: scikit-learn's ``check_is_fitted`` (>= 1.7) raises AttributeError "'Threshold' object
has no attribute '__sklearn_tags__'" for it, not the TypeError the fit check trusts, so
``trustlab audit --model m.pkl --trust-pickle`` ended in 'trustlab: unexpected failure:
AttributeError: ...' (measured), as did a skops file with the type trusted.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import skops.io

from trustlab.audit import run_audit
from trustlab.audit.models import load_classifier, predict_labels


class Threshold:
    """A classifier of its own library: fit and predict, no scikit-learn base class or tags."""

    def fit(self, X, y):
        return self

    def predict(self, X):
        return (np.asarray(X, dtype=float)[:, 0] > 0).astype(int)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    x = np.linspace(-1, 1, 40)
    return pd.DataFrame({"x": x, "g": np.tile(["a", "b"], 20), "y": (x > 0.1).astype(int)})


def _dump(path, suffix):
    if suffix == ".pkl":
        path.write_bytes(pickle.dumps(Threshold()))
    else:
        skops.io.dump(Threshold(), path)
    return path


@pytest.mark.parametrize("suffix", [".pkl", ".skops"])
def test_a_file_of_an_untagged_classifier_loads_and_predicts(table, suffix, tmp_path):
    path = _dump(tmp_path / f"m{suffix}", suffix)
    model = load_classifier(
        path, trust_pickle=True, trust_types=[f"{__name__}.Threshold", Threshold.__qualname__]
    )
    assert isinstance(model, Threshold)
    assert predict_labels(model, table[["x"]]).tolist() == (table["x"] > 0).astype(int).tolist()


def test_run_audit_audits_the_file(table, tmp_path):
    path = _dump(tmp_path / "m.pkl", ".pkl")
    result = run_audit(
        table,
        label="y",
        group="g",
        model=str(path),
        trust_pickle=True,
        sections=["overview"],
        out=tmp_path / "out",
    )
    assert [s.status for s in result.report.sections] == ["ok"]
    assert result.headline()["m"]["accuracy"] == pytest.approx(
        (table["x"] > 0).eq(table["y"]).mean()
    )
