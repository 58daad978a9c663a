"""``trustlab fairness dcp --sample-weight`` (review 54): float weights against the table with
rows repeated, every output saying the records are weighted, and a weight column that is also
--label, --pred or --group refused (--sample-weight y beside --label y weighed class 0 by 0: it
vanished from every group, exit 0)."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line, run_main, with_options

BASE = ["fairness", "dcp", "--label", "y", "--pred", "p", "--group", "g", "--n-restarts", "2"]


def _table(seed: int, n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"y": rng.integers(0, 3, n), "g": rng.choice(["a", "b", "c"], n)})
    accurate = rng.random(n) < np.where(frame.g == "a", 0.85, 0.6)
    frame["p"] = np.where(accurate, frame.y, rng.integers(0, 3, n))
    frame["num"] = rng.integers(1, 4, n)
    frame["w"] = frame.num / 4  # 0.25, 0.5, 0.75: no whole numbers
    return frame


def test_float_weights_equal_the_rows_repeated(tmp_path, capsys):
    frame = _table(54)
    frame.drop(columns="num").to_csv(tmp_path / "weighted.csv", index=False)
    repeated = frame.loc[frame.index.repeat(frame.num)].drop(columns=["num", "w"])
    repeated.to_csv(tmp_path / "repeated.csv", index=False)
    results = []
    for name, extra in (("weighted.csv", ["--sample-weight", "w"]), ("repeated.csv", [])):
        args = with_options([*BASE, "--json"], ["--data", tmp_path / name, *extra])
        code, out, err = run_main(args, capsys)
        assert code == 0, err
        results.append(json.loads(out))
    weighted, plain = results
    for regime, key in (("known", "lower"), ("known", "upper"), ("aggregate", "estimate")):
        assert weighted[regime][key] == pytest.approx(plain[regime][key], abs=1e-9)
    assert (weighted["inputs"]["weighted"], plain["inputs"]["weighted"]) == (True, False)
    assert (weighted["inputs"]["n_records"], plain["inputs"]["n_records"]) == (120, len(repeated))


def test_summary_and_result_json_say_the_records_are_weighted(tmp_path, capsys):
    _table(55).to_csv(tmp_path / "t.csv", index=False)
    out_dir = tmp_path / "out"
    extra = ["--data", tmp_path / "t.csv", "--sample-weight", "w", "--out", out_dir]
    code, out, err = run_main(with_options([*BASE, "--no-aggregate"], extra), capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith("Records weighted by sample_weight (total weight ")
    assert out.splitlines()[0].endswith(
        " over 120 records): every share and bound below is weighted"
    )
    saved = json.loads((out_dir / "result.json").read_text())
    assert saved["inputs"]["weighted"] is True


@pytest.mark.parametrize("option, column", [("--label", "y"), ("--pred", "p"), ("--group", "g")])
def test_a_weight_column_that_is_also_a_role_is_refused(tmp_path, capsys, option, column):
    _table(56).to_csv(tmp_path / "t.csv", index=False)
    extra = ["--data", tmp_path / "t.csv", "--sample-weight", column]
    code, out, err = run_main(with_options(BASE, extra), capsys)
    assert (code, out, one_line(err)) == (
        2,
        "",
        "trustlab: error: --sample-weight: expected a column of row weights other than --label, "
        f"--pred and --group, got {column!r}, the {option} column",
    )


def test_one_weighted_group_is_one_line(tmp_path, capsys):
    frame = _table(57)
    frame["w"] = np.where(frame.g == "a", 1.5, 0.0)
    frame.to_csv(tmp_path / "t.csv", index=False)
    extra = ["--data", tmp_path / "t.csv", "--sample-weight", "w"]
    code, out, err = run_main(with_options(BASE, extra), capsys)
    assert (code, out) == (2, "")
    assert one_line(err) == (
        "trustlab: error: --sample-weight: expected a positive weight in at least 2 groups (DCP "
        "compares groups), got one: only group 'a' weighs more than 0 (every record of 'b', 'c' "
        "has weight 0)"
    )


def test_one_row_without_a_weight_is_one_row(tmp_path, capsys):
    """It read 'got 1 rows without one'."""
    frame = _table(58)
    frame["w"] = frame.w.where(frame.index != 119)
    frame.to_csv(tmp_path / "t.csv", index=False)
    extra = ["--data", tmp_path / "t.csv", "--sample-weight", "w"]
    code, _, err = run_main(with_options(BASE, extra), capsys)
    assert (code, one_line(err)) == (
        2,
        "trustlab: error: --sample-weight: expected a weight on every row, got 1 row without one "
        "(the first is data row 120)",
    )
