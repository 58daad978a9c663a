"""``trustlab strategic price``: a non-finite --price and NaN in a named column are refused
naming the option (and the column), not read as 'no market' or as a position in --data."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from trustlab.cli import strategic
from trustlab.errors import InputError


@pytest.fixture
def path(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "income": rng.normal(size=20),
            "age": rng.normal(size=20),
            "savings": rng.lognormal(size=20),
        }
    )
    frame.loc[3, "age"] = np.nan
    frame.loc[5, "savings"] = np.inf
    target = tmp_path / "users.csv"
    frame.to_csv(target, index=False)
    return target


def invoke(*args):
    return CliRunner().invoke(strategic.app, [str(a) for a in args])


@pytest.mark.parametrize("price", ["1e400", "inf", "nan"])
def test_a_non_finite_price_is_refused_naming_price(path, price):
    result = invoke(
        "price", "--data", path, "--weights", "income=1", "--budget-col", "income",
        "--price", price,
    )  # fmt: skip
    assert isinstance(result.exception, InputError), result.output
    assert result.exception.argument == "--price"
    assert "finite" in str(result.exception) and "1e400" in str(result.exception)


def test_nan_in_a_weights_column_names_the_option_column_and_row(path):
    result = invoke(
        "price", "--data", path, "--weights", "income=1,age=2", "--budget-col", "income"
    )
    assert isinstance(result.exception, InputError), result.output
    message = str(result.exception)
    assert result.exception.argument == "--weights"
    assert message.startswith("--weights:") and "'age'" in message and "row 3" in message


def test_inf_in_the_budget_column_names_the_column(path):
    result = invoke("price", "--data", path, "--weights", "income=1", "--budget-col", "savings")
    assert isinstance(result.exception, InputError), result.output
    message = str(result.exception)
    assert result.exception.argument == "--budget-col"
    assert "'savings'" in message and "row 5" in message
