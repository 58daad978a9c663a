"""run_audit on a DataFrame (review 53): one built from an array has columns named 0, 1, ...; the
overview failed joining them ('sequence item 0: expected str instance, int found'). Their names
are now read as text; two columns of one name (selecting it gave a table: AttributeError
'DataFrame' object has no attribute 'dtype') are refused naming data."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError


def array_table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    table = pd.DataFrame(X)  # columns 0 and 1
    table["g"] = rng.choice(["a", "b"], n)
    table["y"] = X[:, 0] > 0
    table["yhat"] = X[:, 0] > 0.1
    return table


@pytest.mark.parametrize("pred", ["yhat", None])
def test_a_table_with_number_column_names_is_audited(tmp_path, pred):
    table = array_table() if pred else array_table().drop(columns="yhat")
    result = run_audit(
        table, label="y", group="g", pred=pred, out=tmp_path, sections=["overview", "fairness"]
    )
    assert [(s.id, s.status) for s in result.report.sections] == [
        ("overview", "ok"),
        ("fairness", "ok"),
    ]
    assert result.report.sections[0].data["features"] == ["0", "1"]
    if pred:
        expected = float(np.mean(table["y"] == table["yhat"]))
        assert result.headline()["yhat"]["accuracy"] == pytest.approx(expected)
    assert list(table.columns[:2]) == [0, 1]  # the caller's table is not renamed


def test_two_columns_of_one_name_are_refused(tmp_path):
    table = array_table().rename(columns={0: "x", 1: "x"})
    with pytest.raises(InputError) as caught:
        run_audit(table, label="y", group="g", pred="yhat", out=tmp_path / "o")
    assert str(caught.value) == "data: expected distinct column names, got 'x' more than once"
    assert caught.value.argument == "data"
    table = array_table().rename(columns={0: "1"})  # '1' and 1: one name as text
    with pytest.raises(InputError, match="got '1' more than once"):
        run_audit(table, label="y", group="g", pred="yhat", out=tmp_path / "o")


def test_a_column_named_by_a_number_is_found_by_that_number(tmp_path):
    table = array_table().rename(columns={"g": 2})  # columns 0, 1, 2, y, yhat
    result = run_audit(table, label="y", group=2, pred="yhat", out=tmp_path, sections=["overview"])
    assert result.context.group == "2"
    assert [s.status for s in result.report.sections] == ["ok"]
