"""An audit never writes over the table it audits (review 54): auditing an earlier audit's
predictions.csv into the same --out with --overwrite replaced that table with the new
predictions.csv (one model's columns left of three), although the earlier files 'keep' the table
being audited. It is refused naming --out, before anything is deleted or written."""

import pandas as pd
import pytest

from cli_helpers import run_main
from trustlab.audit import run_audit
from trustlab.errors import InputError


def table() -> pd.DataFrame:
    y = ["a", "b", "b", "a", "a", "b"] * 20
    return pd.DataFrame(
        {"x": range(120), "y": y, "g": ["n", "s", "e"] * 40, "p": y[1:] + y[:1], "q": y}
    )


def earlier_audit(tmp_path):
    out = tmp_path / "out"
    run_audit(table(), label="y", group="g", pred="p", out=out, sections=[])
    return out, out / "predictions.csv"


def test_auditing_the_predictions_csv_of_out_into_out_is_refused(tmp_path):
    out, predictions = earlier_audit(tmp_path)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(InputError) as err:
        run_audit(predictions, label="y", group="g", pred="p", out=out, overwrite=True, sections=[])
    assert err.value.argument == "out"
    assert "predictions.csv is a file being audited" in str(err.value)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing deleted or written


def test_the_command_says_so_in_one_line(tmp_path, capsys):
    out, predictions = earlier_audit(tmp_path)
    before = predictions.read_bytes()
    args = ["audit", "--data", predictions, "--label", "y", "--group", "g", "--pred", "p",
            "--out", out, "--overwrite"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("trustlab: error: --out: ")
    assert predictions.read_bytes() == before  # the table is still the earlier one


def test_the_same_table_into_another_folder_still_runs(tmp_path):
    _, predictions = earlier_audit(tmp_path)
    result = run_audit(predictions, label="y", group="g", pred="p", out=tmp_path / "new")
    assert result.predictions_path.is_file()
