"""The audit's terminal summary (review 53): one misnamed predicted class ('Review' for the label's
'review', the other classes shared) was audited with a warning on the page and in report.json
only; the summary now gives it in a line, so the command's output says it too."""

import pandas as pd

from trustlab.audit import run_audit


def misnamed_table() -> pd.DataFrame:
    y = ["approved", "denied", "review", "approved", "denied", "approved"] * 10
    pred = ["Review" if label == "review" else label for label in y]
    pred[0] = "denied"
    groups = ["north", "south"] * 30
    return pd.DataFrame({"x": range(60), "y": y, "g": groups, "pred": pred})


def test_summary_names_a_predicted_class_the_label_never_holds(tmp_path):
    result = run_audit(
        misnamed_table(), label="y", group="g", pred="pred", out=tmp_path, sections=["overview"]
    )
    warnings = [line for line in result.summary().splitlines() if "warning:" in line]
    assert warnings == [
        "  warning: classes predicted that no row's 'y' holds: pred predicts Review (10 audited "
        "rows); each such prediction is an error: check that the predictions and the label use "
        "the same class names"
    ]


def test_summary_has_no_such_warning_without_one(tmp_path):
    table = misnamed_table().assign(pred=lambda t: t["y"])
    result = run_audit(table, label="y", group="g", pred="pred", out=tmp_path, sections=[])
    assert "warning:" not in result.summary()  # and no overview section: nothing to read
    result = run_audit(
        table, label="y", group="g", pred="pred", out=tmp_path / "o", sections=["overview"]
    )
    assert "warning:" not in result.summary()


def test_json_output_carries_the_warnings_and_notes(tmp_path, capsys):
    """``--json`` printed the headline only: the misnamed class was said in neither form of the
    command's output. Now ``warnings`` and ``notes`` hold the summary's lines."""
    import json

    from cli_helpers import run_main

    misnamed_table().to_csv(tmp_path / "t.csv", index=False)
    args = ["audit", "--data", tmp_path / "t.csv", "--label", "y", "--group", "g", "--pred",
            "pred", "--out", tmp_path / "o", "--json"]  # fmt: skip
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    printed = json.loads(out)
    result = run_audit(misnamed_table(), label="y", group="g", pred="pred", out=tmp_path / "p")
    assert printed["warnings"] == result.warnings() and len(printed["warnings"]) == 1
    assert "Review (10 audited rows)" in printed["warnings"][0]
    assert printed["notes"] == list(result.context.notes)
