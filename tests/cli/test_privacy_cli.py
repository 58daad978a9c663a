"""``trustlab privacy dsi``: files in, --json and --out, one-line errors with exit 2."""

import json

import numpy as np
import pytest

from trustlab.privacy import calibrate, optimal_gaussian_covariance


@pytest.fixture
def deltas_file(tmp_path):
    deltas = np.random.default_rng(0).normal(size=(6, 9))
    path = tmp_path / "deltas.npy"
    np.save(path, deltas)
    return path, deltas


def test_json_output_matches_the_api(run, deltas_file):
    path, deltas = deltas_file
    code, out, _ = run(
        "privacy", "dsi", "--deltas", path, "--epsilon", 2, "--delta", 1e-5, "--steps", 3, "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["covariance"]["trace"] == pytest.approx(optimal_gaussian_covariance(deltas).trace)
    expected = calibrate(2.0, 1e-5, 3).noise_multiplier
    assert data["calibration"]["noise_multiplier"] == pytest.approx(expected)
    assert data["calibration"]["accountant"] == "exact"
    assert "not differential privacy" in data["guarantee"]


def test_out_writes_a_factor_that_reproduces_sigma(run, deltas_file, tmp_path):
    path, deltas = deltas_file
    value = np.arange(9.0)
    np.save(tmp_path / "f.npy", value)
    code, out, _ = run(
        "privacy",
        "dsi",
        "--deltas",
        path,
        "--epsilon",
        1,
        "--delta",
        1e-6,
        "--accountant",
        "paper",
        "--out",
        tmp_path / "res",
        "--output",
        tmp_path / "f.npy",
        "--seed",
        4,
    )
    assert code == 0 and "trace" in out
    basis = np.load(tmp_path / "res" / "basis.npy")
    factor = np.load(tmp_path / "res" / "factor.npy")
    sigma = basis @ factor @ factor.T @ basis.T
    assert np.allclose(sigma, optimal_gaussian_covariance(deltas).covariance(), atol=1e-9)
    report = json.loads((tmp_path / "res" / "result.json").read_text())
    assert report["calibration"]["accountant"] == "paper"
    released = np.load(tmp_path / "res" / "release.npy")
    assert released.shape == (9,) and not np.allclose(released, value)


def test_csv_deltas_and_budgets_are_read(run, tmp_path):
    (tmp_path / "d.csv").write_text("a,b\n3,0\n0,0.5\n")
    np.save(tmp_path / "c.npy", np.array([1.0, 0.25]))
    code, out, _ = run(
        "privacy",
        "dsi",
        "--deltas",
        tmp_path / "d.csv",
        "--budgets",
        tmp_path / "c.npy",
        "--epsilon",
        1,
        "--delta",
        1e-5,
        "--json",
    )
    assert code == 0
    assert json.loads(out)["covariance"]["trace"] == pytest.approx(9 + 1.0, rel=1e-6)


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["--epsilon", "0", "--delta", "1e-5"], "epsilon"),
        (["--epsilon", "1", "--delta", "2"], "delta"),
        (["--epsilon", "1", "--delta", "1e-5", "--accountant", "rdp"], "accountant"),
    ],
)
def test_bad_budget_exits_2_with_one_line(run, deltas_file, args, argument):
    path, _ = deltas_file
    code, _, err = run("privacy", "dsi", "--deltas", path, *args)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and argument in lines[0]


def test_bad_deltas_exit_2(run, tmp_path):
    np.save(tmp_path / "zero.npy", np.zeros((2, 3)))
    code, _, err = run(
        "privacy", "dsi", "--deltas", tmp_path / "zero.npy", "--epsilon", 1, "--delta", 1e-5
    )
    assert code == 2 and "non-zero" in err
    code, _, err = run(
        "privacy", "dsi", "--deltas", tmp_path / "missing.npy", "--epsilon", 1, "--delta", 1e-5
    )
    assert code == 2 and "--deltas" in err


def test_output_of_the_wrong_size_names_the_option(run, deltas_file, tmp_path):
    path, _ = deltas_file
    np.save(tmp_path / "f.npy", np.zeros(4))
    code, _, err = run(
        "privacy",
        "dsi",
        "--deltas",
        path,
        "--epsilon",
        1,
        "--delta",
        1e-5,
        "--output",
        tmp_path / "f.npy",
        "--out",
        tmp_path / "res",
    )
    assert code == 2 and "--output: expected 9 values" in err
    assert not (tmp_path / "res").exists()
