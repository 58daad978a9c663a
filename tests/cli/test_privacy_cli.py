"""``trustlab privacy dsi``: files in, --json and --out, one-line errors with exit 2."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
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


# Issue 18, section 4: extreme values, reruns into --out, --encoding, option names in errors.


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--epsilon", "1e308", "--delta", "1e-5"], "--epsilon: expected a number in (0, 100]"),
        (["--epsilon", "inf", "--delta", "1e-5"], "--epsilon: expected a number in (0, 100]"),
        (["--epsilon", "1", "--delta", "1", "--steps", "5"], "--delta: expected a number in (0, 1)"),
        (["--epsilon", "1", "--delta", "1e-5", "--steps", "1000000000000000"],
         "--steps: expected an integer in [1, 10^12]"),
        (["--epsilon", "1e-300", "--delta", "1e-5", "--accountant", "paper"], "--epsilon: "),
    ],
)  # fmt: skip
def test_extreme_values_are_one_line_naming_the_option_and_range(run, deltas_file, args, start):
    path, _ = deltas_file
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning leaks
        code, _, err = run("privacy", "dsi", "--deltas", path, *args)
    assert code == 2 and one_line(err).startswith("trustlab: error: " + start)


@pytest.mark.parametrize(
    "args",
    [["--epsilon", "1e-12", "--delta", "1e-5"], ["--epsilon", "1", "--delta", "1e-300"],
     ["--epsilon", "1", "--delta", "0.999999"], ["--epsilon", "100", "--delta", "1e-5"],
     ["--epsilon", "1", "--delta", "1e-5", "--steps", "1000000000000"]],
)  # fmt: skip
def test_extreme_but_valid_values_are_handled_without_warnings(run, deltas_file, args):
    path, _ = deltas_file
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = run("privacy", "dsi", "--deltas", path, *args, "--json")
    assert code == 0 and err == ""
    assert np.isfinite(json.loads(out)["calibration"]["noise_multiplier"])


def test_rerun_into_the_same_out_is_refused_without_overwrite(run, deltas_file, tmp_path):
    path, _ = deltas_file
    out = tmp_path / "dsi"
    np.save(tmp_path / "f.npy", np.zeros(9))
    args = ["privacy", "dsi", "--deltas", path, "--epsilon", 1, "--delta", 1e-5, "--out", out]
    assert run(*args, "--output", tmp_path / "f.npy")[0] == 0
    assert (out / "release.npy").is_file()
    code, _, err = run(*args)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out:")
    assert "--overwrite" in err
    code, _, _ = run(*args, "--overwrite")
    assert code == 0 and not (out / "release.npy").exists()  # nothing of the old run is left


def test_csv_input_takes_an_encoding_and_budget_errors_name_the_option(run, tmp_path):
    table = pd.DataFrame({"größe": [1.0, 0.0, 2.0], "b": [0.0, 1.0, 1.0]})
    table.to_csv(tmp_path / "d.csv", index=False, encoding="latin-1")
    args = ["privacy", "dsi", "--deltas", tmp_path / "d.csv", "--epsilon", 1, "--delta", 1e-5]
    code, _, err = run(*args)
    assert code == 2 and "--encoding" in one_line(err)
    assert run(*args, "--encoding", "latin-1")[0] == 0
    np.save(tmp_path / "budgets.npy", np.array([1.0, 0.0, 1.0]))
    code, _, err = run(*args, "--encoding", "latin-1", "--budgets", tmp_path / "budgets.npy")
    assert code == 2 and one_line(err).startswith("trustlab: error: --budgets: expected")


@pytest.mark.parametrize(
    "write",
    [
        lambda d, p: np.savetxt(p, d, delimiter=","),  # no header row
        lambda d, p: pd.DataFrame(d, columns=["a", "b"]).to_csv(p, index=False),  # named columns
        lambda d, p: pd.DataFrame(d).to_csv(p),  # pandas' defaults: column numbers and an index
        lambda d, p: pd.DataFrame(d, columns=["a", "b"]).to_csv(p),  # names and an index
    ],
    ids=["savetxt", "header", "pandas-default", "header-and-index"],
)
def test_every_csv_layout_gives_the_npy_result(run, tmp_path, write):
    """A CSV without a header row keeps its first difference (it was taken as column names,
    silently protecting one reference set less); pandas' index column is not a coordinate."""
    deltas = np.array([[3.0, 0.0], [0.0, 0.5], [1.0, 1.0]])
    np.save(tmp_path / "d.npy", deltas)
    write(deltas, tmp_path / "d.csv")
    args = ["privacy", "dsi", "--epsilon", 1, "--delta", 1e-5, "--json"]
    expected = json.loads(run(*args, "--deltas", tmp_path / "d.npy")[1])["covariance"]
    code, out, err = run(*args, "--deltas", tmp_path / "d.csv")
    assert code == 0, err
    got = json.loads(out)["covariance"]
    assert got["n_differences"] == expected["n_differences"] == 3
    assert got["trace"] == pytest.approx(expected["trace"], rel=1e-12)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0,1\n3,0\n0,0.5\n", "the column numbers pandas writes as a header, or data"),
        ("a,b\n3,\n0,0.5\n", "expected numbers only in d.csv, got an empty cell (a missing"),
        ("a,b\n3,nan\n0,0.5\n", "got 'nan' (a missing value) at line 2, column 2"),
        ("a,b\n3,x\n0,0.5\n", "expected numbers only in d.csv, got 'x'"),
        ("a,b\n", "expected at least one row of numbers in d.csv"),
    ],
)
def test_an_ambiguous_or_broken_csv_is_refused_naming_the_option(run, tmp_path, text, says):
    (tmp_path / "d.csv").write_text(text)
    code, _, err = run(
        "privacy", "dsi", "--deltas", tmp_path / "d.csv", "--epsilon", 1, "--delta", 1e-5
    )
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --deltas: ") and says in one_line(err)


def test_budgets_in_a_table_of_several_columns_are_refused(run, tmp_path):
    # a 2 x 2 table for 4 differences was flattened row by row and taken as 4 budgets
    np.save(tmp_path / "d.npy", np.array([[1.0, 0, 0], [0, 2.0, 0], [1, 1, 1], [0, 0, 3.0]]))
    np.savetxt(tmp_path / "b.csv", np.array([[1.0, 2.0], [3.0, 4.0]]), delimiter=",")
    args = ("privacy", "dsi", "--deltas", tmp_path / "d.npy", "--epsilon", 1, "--delta", 1e-5)
    code, _, err = run(*args, "--budgets", tmp_path / "b.csv")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --budgets: expected one column or one row")
    for shape in [(4,), (4, 1), (1, 4)]:  # a column or a row is still read
        np.save(tmp_path / "b.npy", np.ones(shape))
        assert run(*args, "--budgets", tmp_path / "b.npy")[0] == 0


def test_the_release_noise_is_fresh_unless_a_seed_is_given(run, deltas_file, tmp_path):
    """--seed defaulted to 0: every release drew the same, publicly known noise, so F(U) came
    back exactly from release.npy, basis.npy, factor.npy and result.json."""
    path, _ = deltas_file
    value = np.arange(9.0)
    np.save(tmp_path / "f.npy", value)
    args = ["privacy", "dsi", "--deltas", path, "--epsilon", 1, "--delta", 1e-5]
    args += ["--output", tmp_path / "f.npy"]
    for name in ["a", "b"]:
        assert run(*args, "--out", tmp_path / name)[0] == 0
    first, second = (np.load(tmp_path / name / "release.npy") for name in ["a", "b"])
    assert not np.allclose(first, second)
    basis = np.load(tmp_path / "a" / "basis.npy")
    factor = np.load(tmp_path / "a" / "factor.npy")
    scale = json.loads((tmp_path / "a" / "result.json").read_text())["calibration"]
    z = np.random.default_rng(0).standard_normal(basis.shape[1])
    guess = first - scale["noise_multiplier"] * basis @ (factor @ z)
    assert not np.allclose(guess, value)  # the noise is not the seed-0 draw
    for name in ["c", "d"]:  # a given seed still reproduces the draw
        assert run(*args, "--seed", 7, "--out", tmp_path / name)[0] == 0
    assert np.array_equal(
        np.load(tmp_path / "c" / "release.npy"), np.load(tmp_path / "d" / "release.npy")
    )


@pytest.mark.parametrize(
    ("array", "says"),
    [
        (np.zeros(2, dtype=[("a", "f8"), ("b", "f8")]), "dtype [('a'"),  # was exit 1
        (np.array([[1 + 1j, 0], [0, 2]]), "dtype complex128"),  # was read as [[1, 0], [0, 2]]
    ],
    ids=["record-array", "complex"],
)
def test_a_npy_of_other_than_real_numbers_is_refused(run, tmp_path, array, says):
    np.save(tmp_path / "d.npy", array)
    code, _, err = run(
        "privacy", "dsi", "--deltas", tmp_path / "d.npy", "--epsilon", 1, "--delta", 1e-5
    )
    assert code == 2, err
    assert one_line(err).startswith("trustlab: error: --deltas: expected a .npy array of real")
    assert says in one_line(err)


def test_an_unknown_file_kind_is_refused_naming_npy_among_the_kinds(run, tmp_path):
    np.savez(tmp_path / "d.npz", a=np.eye(2))
    code, _, err = run(
        "privacy", "dsi", "--deltas", tmp_path / "d.npz", "--epsilon", 1, "--delta", 1e-5
    )
    assert code == 2 and "expected a .npy, .csv" in one_line(err)


def test_text_and_result_json_carry_the_noise_added_and_the_budgets(run, tmp_path):
    # the text gave the unit Sigma only; result.json lost the budgets (review pass 52)
    np.save(tmp_path / "d.npy", np.array([[1.0, 0.0], [0.3, 2.0]]))
    np.save(tmp_path / "c.npy", np.array([1.0, 4.0]))
    args = ["privacy", "dsi", "--deltas", tmp_path / "d.npy", "--epsilon", 1, "--delta", 1e-5]
    code, out, _ = run(*args, "--budgets", tmp_path / "c.npy", "--out", tmp_path / "o")
    assert code == 0
    assert "noise added:" in out and "not differential privacy" in out
    assert "worst difference gets epsilon" in out
    report = json.loads((tmp_path / "o" / "result.json").read_text())
    assert report["covariance"]["budgets"] == [1.0, 4.0]
    assert report["worst_epsilon"] > 2


def test_output_without_out_is_refused_rather_than_the_release_lost(run, tmp_path):
    # the release was drawn, neither printed nor written, and the run exited 0 (review pass 52)
    np.save(tmp_path / "d.npy", np.array([[1.0, 0.0], [0.0, 2.0]]))
    np.save(tmp_path / "f.npy", np.array([3.0, 4.0]))
    args = ["privacy", "dsi", "--deltas", tmp_path / "d.npy", "--epsilon", 1, "--delta", 1e-5]
    code, _, err = run(*args, "--output", tmp_path / "f.npy")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --output: expected --out DIR as well")
    code, _, _ = run(*args, "--output", tmp_path / "f.npy", "--out", tmp_path / "o")
    assert code == 0 and (tmp_path / "o" / "release.npy").is_file()
