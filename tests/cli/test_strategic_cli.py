"""``trustlab strategic price/simulate``: tables in, --json and --out, errors naming the option.

Runs the ``strategic`` sub-app directly (CliRunner); the root app maps the InputError these
commands raise to one line on stderr and exit code 2.
"""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from trustlab.cli import strategic
from trustlab.errors import InputError
from trustlab.strategic import market_price

torch.set_num_threads(1)


def invoke(*args):
    return CliRunner().invoke(strategic.app, [str(a) for a in args])


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "income": rng.normal(size=50),
            "tenure": rng.normal(size=50),
            "notes": ["x"] * 50,
            "savings": rng.lognormal(size=50),
            "repaid": rng.integers(0, 2, size=50),
        }
    )
    path = tmp_path / "users.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_price_json_matches_the_api(table):
    path, frame = table
    result = invoke(
        "price", "--data", path, "--weights", "income=0.8, tenure=-0.3",
        "--intercept", -0.2, "--budget-col", "savings", "--label", "repaid", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = market_price(
        [0.8, -0.3], -0.2, frame[["income", "tenure"]], frame["savings"], y=frame["repaid"]
    )
    assert data["price"] == expected.price and data["revenue"] == expected.revenue
    assert data["accuracy"] == expected.accuracy
    assert data["feature_prices"][1] == 0.0  # a negative weight is never worth buying


def test_price_out_writes_users_json_and_plot(table, tmp_path):
    path, frame = table
    out = tmp_path / "market"
    result = invoke(
        "price", "--data", path, "--weights", "income=1", "--budget-col", "savings",
        "--price", 0.5, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "revenue-maximising price" in result.stdout
    users = pd.read_csv(out / "users.csv")
    assert len(users) == 50 and set(users.columns) >= {"distance", "buys", "paid", "decision"}
    expected = market_price([1.0], 0.0, frame[["income"]], frame["savings"])
    report = json.loads((out / "result.json").read_text())
    assert report["price"] == 0.5 and report["optimal_price"] == expected.price
    assert report["feature_names"] == ["income"]
    assert users["paid"].sum() == pytest.approx(report["revenue"])
    assert (out / "revenue.png").stat().st_size > 1000


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--weights", "income:0.8", "--budget-col", "savings"], "--weights"),
        (["--weights", "income=1,income=2", "--budget-col", "savings"], "--weights"),
        (["--weights", "missing=1", "--budget-col", "savings"], "--weights"),
        (["--weights", "notes=1", "--budget-col", "savings"], "--weights"),
        (["--weights", "income=1", "--budget-col", "nothing"], "--budget-col"),
        (["--weights", "income=1", "--budget-col", "tenure"], "budgets"),
        (["--weights", "income=0", "--budget-col", "savings"], "w"),
        (
            ["--weights", "income=1", "--budget-col", "savings", "--label", "notes"],
            "--label",
        ),
    ],
)
def test_price_errors_name_the_option(table, args, option):
    path, _ = table
    result = invoke("price", "--data", path, *args)
    assert isinstance(result.exception, InputError), result.output
    assert result.exception.argument == option


def test_simulate_writes_plots_and_numbers(tmp_path):
    out = tmp_path / "sim"
    result = invoke(
        "simulate", "--out", out, "--n-samples", 300, "--max-epochs", 3, "--seed", 1, "--json"
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    saved = json.loads((out / "result.json").read_text())
    assert printed == saved and saved["random_state"] == 1 and saved["data"] == "synthetic"
    assert set(saved["learners"]) == {
        "naive", "fixed_cost_short", "fixed_cost_long", "market_aware"
    }  # fmt: skip
    for name in ("revenue.png", "accuracy.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"


def test_simulate_rejects_unknown_data(tmp_path):
    result = invoke("simulate", "--out", tmp_path, "--data", "adult")
    assert isinstance(result.exception, InputError) and result.exception.argument == "data"


# Issue 18, section 4: reruns into --out are refused without --overwrite; --encoding for CSV.


def test_price_and_simulate_refuse_an_existing_result_without_overwrite(table, tmp_path):
    path, _ = table
    out = tmp_path / "market"
    args = ["price", "--data", path, "--weights", "income=1", "--budget-col", "savings", "--out",
            out]  # fmt: skip
    assert invoke(*args).exit_code == 0
    result = invoke(*args)
    assert isinstance(result.exception, InputError) and result.exception.argument == "--out"
    assert "--overwrite" in str(result.exception)
    assert invoke(*args, "--overwrite").exit_code == 0
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "result.json").write_text("{}")
    result = invoke("simulate", "--out", tmp_path / "sim")  # refused before simulating
    assert isinstance(result.exception, InputError) and "--overwrite" in str(result.exception)


def test_price_reads_a_table_in_another_encoding(table, tmp_path):
    _, frame = table
    frame.rename(columns={"income": "einkünfte"}).to_csv(
        tmp_path / "latin.csv", index=False, encoding="latin-1"
    )
    args = ["price", "--data", tmp_path / "latin.csv", "--weights", "einkünfte=1", "--budget-col",
            "savings", "--json"]  # fmt: skip
    result = invoke(*args)
    assert isinstance(result.exception, InputError) and "--encoding" in str(result.exception)
    result = invoke(*args, "--encoding", "latin-1")
    assert result.exit_code == 0, result.output
