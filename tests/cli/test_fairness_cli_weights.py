"""``trustlab fairness dcp --sample-weight COLUMN``: row weights (survey weights) reach
``multiclass_dcp``. Oracle: integer weights give the result of the table with each row repeated
that many times; a row dropped for a missing label takes its weight with it; a bad weight column
is one line naming --sample-weight, exit 2."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.fairness import multiclass_dcp

BASE = ["fairness", "dcp", "--label", "y", "--pred", "p", "--group", "g", "--json"]


def _table(seed: int, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"y": rng.integers(0, 3, n), "g": rng.choice(["a", "b", "c"], n)})
    accurate = rng.random(n) < np.where(frame.g == "a", 0.85, 0.6)
    frame["p"] = np.where(accurate, frame.y, rng.integers(0, 3, n))
    frame["w"] = rng.integers(0, 4, n)  # zero weights included
    return frame


def _dcp(path, capsys, *extra):
    code, out, err = run_main([*BASE, "--data", path, "--n-restarts", "2", *extra], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("seed", [11, 12])
def test_integer_weights_equal_repeated_rows(tmp_path, capsys, seed):
    frame = _table(seed)
    frame.to_csv(tmp_path / "weighted.csv", index=False)
    repeated = frame.loc[frame.index.repeat(frame.w)].drop(columns="w")
    repeated.to_csv(tmp_path / "repeated.csv", index=False)
    weighted = _dcp(tmp_path / "weighted.csv", capsys, "--sample-weight", "w")
    plain = _dcp(tmp_path / "repeated.csv", capsys)
    for regime in ("known", "aggregate"):
        for key in ("lower", "upper", "estimate"):
            if key in plain[regime]:
                assert weighted[regime][key] == pytest.approx(plain[regime][key], abs=1e-10)
    unweighted = _dcp(tmp_path / "weighted.csv", capsys)
    assert unweighted["known"]["upper"] != pytest.approx(weighted["known"]["upper"], abs=1e-6)


def test_the_weights_are_those_of_the_library_and_follow_dropped_rows(tmp_path, capsys):
    frame = _table(13).astype({"y": float, "w": float})
    frame.loc[4, ["y", "w"]] = [np.nan, 1000.0]  # dropped with its weight
    frame.loc[9, "w"] = 2.5
    frame.to_csv(tmp_path / "t.csv", index=False)
    got = _dcp(tmp_path / "t.csv", capsys, "--sample-weight", "w", "--no-aggregate")
    kept = frame.drop(index=4)
    expected = multiclass_dcp(
        kept.y.astype(int).to_numpy(), kept.p.to_numpy(), kept.g.to_numpy(),
        sample_weight=kept.w.to_numpy(), n_restarts=2, random_state=0, aggregate=False,
    )  # fmt: skip
    assert got["known"]["lower"] == pytest.approx(expected.known.lower, abs=1e-12)
    assert got["known"]["upper"] == pytest.approx(expected.known.upper, abs=1e-12)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f: f.astype({"w": object}).assign(w=lambda t: t.w.where(t.index != 5, "heavy")),
         "--sample-weight: expected a column of numbers, got 'heavy'"),
        (lambda f: f.astype({"w": float}).assign(w=lambda t: t.w.where(~t.index.isin([7, 9]))),
         "--sample-weight: expected a weight on every row, got 2 rows without one (the first is "
         "data row 8)"),
        (lambda f: f.assign(w=lambda t: t.w.where(t.index != 3, -2)),
         "--sample-weight: expected non-negative weights, got -2 in data row 4 (1 such value(s) "
         "in all)"),
        (lambda f: f.assign(w=0), "--sample-weight: expected a positive total weight, got 0.0"),
        (lambda f: f.assign(w=True),
         "--sample-weight: expected a column of numbers, got 'True/False values'"),
    ],
    ids=["text", "missing", "negative", "all zero", "bool"],
)  # fmt: skip
def test_a_bad_weight_column_is_one_line_and_exit_2(tmp_path, capsys, change, message):
    change(_table(14)).to_csv(tmp_path / "t.csv", index=False)
    code, out, err = run_main([*BASE, "--data", tmp_path / "t.csv", "--sample-weight", "w"], capsys)
    assert (code, out, one_line(err)) == (2, "", f"trustlab: error: {message}")


def test_a_weight_column_not_in_the_data_is_named(tmp_path, capsys):
    _table(15).to_csv(tmp_path / "t.csv", index=False)
    args = [*BASE, "--data", tmp_path / "t.csv", "--sample-weight", "weight"]
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert one_line(err).startswith(
        "trustlab: error: --sample-weight: expected a column of the data"
    )


def test_the_library_names_the_first_negative_weight():
    with pytest.raises(InputError, match=r"got -0\.5 at index 1 \(2 negative value\(s\) in all\)"):
        multiclass_dcp([0, 1, 1], [0, 1, 0], ["a", "b", "a"], sample_weight=[1, -0.5, -1])
