"""The audited table as read from a file: class and group names that look like missing values,
a row index written as a column, and how the zoo's split is described."""

import json

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.audit.sections import overview
from trustlab.audit.table import load_table


def labelled(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame(
        {
            "x": x,
            "grp": rng.choice(["NA", "EU", "AS"], size=n, p=[0.5, 0.3, 0.2]),
            "y": np.where(x < -0.4, "None", np.where(x < 0.4, "Mild", "Severe")),
        }
    )


def test_a_group_na_and_a_class_none_in_a_csv_are_kept(tmp_path):
    frame = labelled()
    frame["yhat"] = np.roll(frame["y"].to_numpy(), 7)
    frame.loc[3, "x"] = np.nan  # a feature keeps pandas' missing values: "NA" there is NaN
    path = tmp_path / "na.csv"
    frame.to_csv(path, index=False, na_rep="NA")
    table = load_table(str(path), "y", "grp", "yhat", None)
    assert len(table.frame) == len(frame)
    n_na, n_none = (frame["grp"] == "NA").sum(), (frame["y"] == "None").sum()
    assert len(table.notes) == 3  # each column's kept word is named, in case it meant missing
    assert f"Column 'grp' holds 'NA' ({n_na} rows), kept as a value" in table.notes[1]
    assert f"Column 'y' holds 'None' ({n_none} rows), kept as a value" in table.notes[0]
    assert table.frame["grp"].value_counts().to_dict() == frame["grp"].value_counts().to_dict()
    assert sorted(table.frame["y"].unique()) == ["Mild", "None", "Severe"]
    assert (table.frame["yhat"] == "None").sum() == (frame["yhat"] == "None").sum()
    assert table.frame["x"].dtype == np.float64 and np.isnan(table.frame.loc[3, "x"])


def test_only_an_empty_label_or_group_cell_is_missing_in_a_csv(tmp_path):
    frame = labelled(n=60)
    frame["grp"] = frame["grp"].astype(object)
    frame.loc[[1, 2], "grp"] = None  # written as empty cells
    frame.loc[5, "y"] = None
    path = tmp_path / "gaps.csv"
    frame.to_csv(path, index=False)
    table = load_table(str(path), "y", "grp", None, None)
    assert len(table.frame) == 57 and "NA" in set(table.frame["grp"])
    assert table.notes[0] == (
        "Dropped 3 of 60 rows with a missing value in a required column (y: 1, grp: 2)."
    )
    assert any(n.startswith("Column 'grp' holds 'NA'") for n in table.notes[1:])
    assert table.row_ids.tolist() == [i for i in range(60) if i not in (1, 2, 5)]


def test_na_in_a_numeric_label_is_still_missing(tmp_path):
    """R writes a missing number as NA: in a column whose other values are numbers it is a
    missing value (the row is dropped with a note), not a third class "NA"."""
    frame = labelled(n=60)
    frame["y"] = (frame["x"] > 0).astype(float)
    frame.loc[[2, 9], "y"] = np.nan
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False, na_rep="NA")
    table = load_table(str(path), "y", "grp", None, None)
    assert len(table.frame) == 58 and sorted(table.frame["y"].unique()) == [0.0, 1.0]
    assert table.notes[0] == (
        "Dropped 2 of 60 rows with a missing value in a required column (y: 2)."
    )


def test_a_group_na_in_a_parquet_file_is_kept_and_a_null_is_missing(tmp_path):
    pytest.importorskip("pyarrow")
    frame = labelled(n=60)
    frame["grp"] = frame["grp"].astype(object)
    frame.loc[4, "grp"] = None
    path = tmp_path / "na.parquet"
    frame.to_parquet(path)
    table = load_table(str(path), "y", "grp", None, None)
    assert len(table.frame) == 59 and "NA" in set(table.frame["grp"])
    assert table.notes[0] == (
        "Dropped 1 of 60 rows with a missing value in a required column (grp: 1)."
    )


def test_a_row_index_written_by_to_csv_is_not_a_feature(tmp_path):
    frame = labelled(n=200).assign(kind=lambda d: np.where(d["x"] > 0, "a", "b"))
    frame = frame.sort_values("y").reset_index(drop=True)  # the index now tells the label
    path = tmp_path / "sorted.csv"
    frame.to_csv(path)  # writes the index as an unnamed first column
    table = load_table(str(path), "y", "grp", None, None)
    assert table.features == ["x", "kind"]
    notes = [n for n in table.notes if "Unnamed: 0" in n]
    assert len(notes) == 1 and "row index" in notes[0]
    # a shuffled index is still an index; a named column of row numbers is data
    frame.sample(frac=1, random_state=0).to_csv(path)
    assert load_table(str(path), "y", "grp", None, None).features == ["x", "kind"]
    frame.rename_axis("id").to_csv(path)
    table = load_table(str(path), "y", "grp", None, None)
    assert table.features == ["id", "x", "kind"]
    assert not [n for n in table.notes if "row index" in n]


def test_the_index_note_reaches_the_zoo_report(tmp_path):
    frame = labelled(n=120).sort_values("y").reset_index(drop=True)
    path = tmp_path / "sorted.csv"
    frame.to_csv(path)
    result = run_audit(str(path), label="y", group="grp", out=tmp_path / "out", sections=[])
    assert result.context.feature_names == ["x"]
    assert any("Unnamed: 0" in note and "row index" in note for note in result.context.notes)


@pytest.mark.parametrize(
    ("classes", "groups", "split", "words"),
    [
        # class c has a single row: no stratified split
        (["a"] * 20 + ["b"] * 19 + ["c"], ["u", "v"] * 20, "none", "not stratified"),
        # the pair (b, w) has a single row: stratified by label only
        (["a", "b"] * 20, ["u", "v"] * 19 + ["u", "w"], "label", "(stratified by label)"),
        (["a", "b"] * 20, ["u"] * 20 + ["v"] * 20, "label and group", "by label and group)"),
    ],
)
def test_the_overview_says_how_the_zoo_split_was_made(tmp_path, classes, groups, split, words):
    rng = np.random.default_rng(3)
    n = len(classes)
    table = pd.DataFrame({"x": rng.normal(size=n), "grp": groups, "y": classes})
    result = run_audit(table, label="y", group="grp", out=tmp_path, sections=["overview"])
    ctx = result.context
    assert ctx.split == split
    meta = json.loads(result.json_path.read_text())["meta"]
    assert meta["split"] == split
    sentence = overview.build(ctx).blocks[0].text
    assert words in sentence
    if split == "none":
        assert "stratified by" not in sentence


def test_an_audit_of_given_predictions_shows_no_split(tmp_path):
    # the page's header said "Split None" for --pred and --model audits
    rng = np.random.default_rng(5)
    y = np.array(["a", "b"] * 20)
    table = pd.DataFrame({"x": rng.normal(size=40), "grp": ["u", "v"] * 20, "y": y, "p": y[::-1]})
    result = run_audit(table, label="y", group="grp", pred="p", out=tmp_path, sections=["overview"])
    assert "split" not in json.loads(result.json_path.read_text())["meta"]
    assert "None" not in result.html_path.read_text()
