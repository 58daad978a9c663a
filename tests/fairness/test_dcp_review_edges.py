"""DCP edge cases from a review: missing names are refused (not read as a group or class 'nan'),
empty cells and empty --labels are named plainly, and a DCP of 0 names no "most affected" group."""

import re

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run
from trustlab.errors import InputError
from trustlab.fairness import aggregates_from_table, dcp_from_confusion, dcp_inputs

AGG = pd.DataFrame(
    {
        "group": ["north", "south"],
        "weight": [0.4, 0.6],
        "label:yes": [0.30, 0.50],
        "label:no": [0.70, 0.50],
        "pred:yes": [0.25, 0.55],
        "pred:no": [0.75, 0.45],
    }
)


def test_an_empty_group_name_is_refused_not_read_as_group_nan():
    table = AGG.copy()
    table.loc[1, "group"] = np.nan
    with pytest.raises(InputError) as err:
        aggregates_from_table(table)
    assert err.value.argument == "data"
    assert str(err.value) == (
        "data: expected a name in column 'group' in every row, got an empty cell in row 2"
    )


def test_a_blank_row_is_named_as_a_missing_group():
    table = pd.concat([AGG, pd.DataFrame([[np.nan] * 6], columns=AGG.columns)])
    with pytest.raises(InputError, match="got an empty cell in row 3$"):
        aggregates_from_table(table)


def test_an_empty_share_is_called_an_empty_cell():
    table = AGG.copy()
    table.loc[1, "pred:yes"] = np.nan
    with pytest.raises(InputError) as err:
        aggregates_from_table(table)
    assert str(err.value) == (
        "data: expected non-negative numbers in column 'pred:yes', got an empty cell in the row "
        "of group 'south'"
    )


def test_dcp_aggregate_cli_refuses_an_empty_group_name(tmp_path, capsys):
    path = tmp_path / "agg.csv"
    path.write_text(
        "group,weight,label:yes,label:no,pred:yes,pred:no\n"
        "north,0.4,0.30,0.70,0.25,0.75\n"
        ",0.6,0.50,0.50,0.55,0.45\n"
    )
    code, out, err = run(["fairness", "dcp-aggregate", "--data", path, "--n-restarts", "1"], capsys)
    assert code == 2 and out == ""
    assert one_line(err) == (
        "trustlab: error: --data: expected a name in column 'group' in every row, got an empty "
        "cell in row 2"
    )


@pytest.mark.parametrize(
    ("argument", "values"),
    [
        ("y_true", dict(y_true=["x", "y", np.nan, "y"])),
        ("y_pred", dict(y_pred=["x", "y", "x", np.nan])),
        ("groups", dict(groups=["a", "a", np.nan, "b"])),
    ],
)
def test_nan_in_a_list_of_text_is_a_missing_value_not_a_class_nan(argument, values):
    # np.asarray would turn the list into strings, NaN into the class or group 'nan'
    kwargs = dict(y_true=["x", "y", "x", "y"], y_pred=["x", "y", "x", "x"], groups=list("aabb"))
    with pytest.raises(InputError) as err:
        dcp_inputs(**(kwargs | values))
    assert err.value.argument == argument
    assert str(err.value).startswith(f"{argument}: expected no missing values")


def test_text_nan_in_a_string_array_is_still_a_name():
    # an explicit string array holding the text "nan" is data, not a missing value
    inputs = dcp_inputs(np.array(["x", "nan", "x", "nan"]), ["x", "nan", "nan", "x"], list("aabb"))
    assert inputs.labels == ("nan", "x")


def test_zero_dcp_names_no_most_affected_group():
    alpha = np.array([[[0.8, 0.2], [0.3, 0.7]]] * 2)
    result = dcp_from_confusion(alpha, [0.5, 0.5], [[0.5, 0.5]] * 2, groups=["x", "y"])
    assert result.upper == pytest.approx(0.0, abs=1e-12)
    assert "most affected group: none (no group is treated unfairly)" in result.summary()
    unfair = dcp_from_confusion(
        np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.3, 0.7]]]),
        [0.5, 0.5],
        [[0.5, 0.5]] * 2,
        groups=["x", "y"],
    )
    assert re.search(r"most affected group: '[xy]' \(\d+\.\d\d %", unfair.summary())


@pytest.mark.parametrize("text", ["", ",", " , "])
def test_empty_labels_option_names_labels(tmp_path, capsys, text):
    path = tmp_path / "s.csv"
    path.write_text("y,p,g\na,a,x\nb,b,x\na,b,y\nb,a,y\n")
    args = ["fairness", "dcp", "--data", path, "--label", "y", "--pred", "p", "--group", "g"]
    code, _, err = run([*args, "--labels", text, "--no-aggregate"], capsys)
    assert code == 2
    assert one_line(err) == (
        f"trustlab: error: --labels: expected comma-separated class labels, got {text!r}"
    )


def test_audit_summary_of_one_model_is_not_a_range():
    from trustlab.audit.sections.fairness import _summary

    one = {"p": {"lower": 0.1, "upper": 0.143, "ratio": 1.43, "aggregate_estimate": None}}
    assert _summary(one) == "DCP upper bound: 14.3% of the population (p)."
    two = one | {"q": {"lower": 0.0, "upper": 0.05, "ratio": None, "aggregate_estimate": None}}
    assert _summary(two) == (
        "DCP upper bounds range from 5.0% to 14.3% of the population (highest: p)."
    )


def test_audit_of_one_model_says_its_upper_bound(tmp_path):
    import json

    from trustlab.audit import run_audit

    rng = np.random.default_rng(0)
    groups = rng.choice(["n", "s"], size=300)
    y = rng.integers(0, 3, size=300)
    pred = np.where(rng.random(300) < np.where(groups == "n", 0.9, 0.6), y, (y + 1) % 3)
    table = pd.DataFrame({"y": y, "p": pred, "g": groups})
    result = run_audit(table, label="y", group="g", pred="p", out=tmp_path, sections=["fairness"])
    (section,) = [
        s for s in json.loads(result.json_path.read_text())["sections"] if s["id"] == "fairness"
    ]
    upper = section["data"]["models"]["p"]["upper"]
    assert section["summary"] == f"DCP upper bound: {upper:.1%} of the population (p)."


def test_a_repeated_column_is_named_not_a_type_error():
    table = AGG.copy()
    table.insert(3, "label:yes", AGG["label:yes"], allow_duplicates=True)
    with pytest.raises(InputError) as err:
        aggregates_from_table(table)
    assert (
        str(err.value)
        == "data: expected one column per name, got column 'label:yes' more than once"
    )


def test_dcp_aggregate_cli_says_a_renamed_repeat_may_be_a_repeated_column(tmp_path, capsys):
    path = tmp_path / "agg.csv"
    path.write_text(
        "group,weight,label:yes,label:no,label:yes,pred:yes,pred:no\n"
        "north,0.4,0.30,0.70,0.30,0.25,0.75\n"
        "south,0.6,0.50,0.50,0.50,0.55,0.45\n"
    )
    # the CLI's reader refuses the repeated name itself (21a9da2) ...
    code, _, err = run(["fairness", "dcp-aggregate", "--data", path], capsys)
    assert code == 2
    assert one_line(err).endswith(
        f"--data: expected distinct column names in {path}, got 'label:yes' more than once"
    )
    # ... and a table pandas read, with the repeat renamed, gets the library's hint
    with pytest.raises(InputError) as exc:
        aggregates_from_table(pd.read_csv(path))
    assert str(exc.value).endswith(
        "got none ('label:yes.1' may be a repeated 'label:yes' column, renamed on reading)"
    )
    # a class name with a dot and a number is not taken for a repeat when no stem column exists
    frame = AGG.rename(columns={"label:yes": "label:v.1", "pred:yes": "pred:v.1"})
    assert aggregates_from_table(frame).labels == ["v.1", "no"]


def test_object_arrays_of_text_get_the_one_line_errors_not_an_attribute_error():
    # pandas columns of text are object arrays: their values have no .item()
    with pytest.raises(InputError) as err:
        dcp_inputs(pd.Series(["a", "a"]), pd.Series(["a", "a"]), ["x", "y"])
    assert str(err.value) == (
        "y_true: expected at least 2 distinct labels among the true and predicted labels, got 1 "
        "('a')"
    )
    with pytest.raises(InputError) as err:
        dcp_inputs([0, 1, 0, 1], pd.Series(["a", "b", "a", "b"]), list("xxyy"))
    assert err.value.argument == "y_pred"
    assert str(err.value).endswith("got text (dtype object, e.g. 'a')")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("a,a,x\na,a,y\n", "--label: expected at least 2 distinct labels"),
        ("0,a,x\n1,b,y\n", "--pred: expected predicted labels of the same type"),
    ],
)
def test_dcp_cli_text_columns_get_one_line_errors(tmp_path, capsys, rows, message):
    path = tmp_path / "t.csv"
    path.write_text("y,p,g\n" + rows)
    args = ["fairness", "dcp", "--data", path, "--label", "y", "--pred", "p", "--group", "g"]
    code, _, err = run(args, capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: " + message)


def test_aggregate_summary_counts_one_restart_in_the_singular():
    from trustlab.fairness import dcp_from_aggregates

    args = ([0.5, 0.5], [[0.5, 0.5], [0.2, 0.8]], [[0.5, 0.5], [0.5, 0.5]])
    one = dcp_from_aggregates(*args, n_restarts=1, random_state=0).summary()
    assert "(local minimum, best of 1 restart): " in one
    assert (
        "best of 2 restarts" in dcp_from_aggregates(*args, n_restarts=2, random_state=0).summary()
    )
