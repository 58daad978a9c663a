"""A report without its overview keeps the overview's notes (review 58, report). With
``sections=["fairness"]`` (``--section fairness``, a documented example) the note that rows with a
missing label were dropped reached the terminal only: report.html and report.json gave the
fairness numbers on fewer rows than the table holds without a word on why."""

import json

import numpy as np
import pandas as pd

from trustlab.audit import run_audit


def _table():
    rng = np.random.default_rng(58)
    n = 40
    y = rng.choice(["no", "yes"], size=n).astype(object)
    pred = np.where(rng.random(n) < 0.8, y, "no")
    y[:3] = None  # three rows without a label: dropped, with a note
    return pd.DataFrame({"y": y, "g": rng.choice(["p", "q"], size=n), "yhat": pred})


def test_without_the_overview_the_notes_are_in_the_meta_and_the_header(tmp_path):
    result = run_audit(
        _table(), label="y", group="g", pred="yhat", out=tmp_path, sections=["fairness"]
    )
    note = next(n for n in result.context.notes if n.startswith("Dropped 3 of 40 rows"))
    meta = json.loads(result.json_path.read_text())["meta"]
    assert meta["notes"] == list(result.context.notes)
    page = result.html_path.read_text()
    assert "<dt>Notes</dt>" in page and note.replace("'", "&#39;") in page


def test_with_the_overview_the_notes_stay_in_it(tmp_path):
    result = run_audit(
        _table(), label="y", group="g", pred="yhat", out=tmp_path, sections=["overview"]
    )
    report = json.loads(result.json_path.read_text())
    assert "notes" not in report["meta"]
    assert any(n.startswith("Dropped 3 of 40") for n in report["sections"][0]["data"]["notes"])


def test_without_the_overview_a_misnamed_class_is_still_warned(tmp_path):
    # 'Review' for 'review': with sections=["fairness"] no warning reached the terminal, --json
    # or the page (AuditResult.warnings() read the overview's data only)
    y = np.array(["review", "ok"] * 10)
    pred = np.where(y == "review", "Review", "ok")
    table = pd.DataFrame({"y": y, "g": ["p", "q", "q", "p"] * 5, "yhat": pred})
    result = run_audit(
        table, label="y", group="g", pred="yhat", out=tmp_path, sections=["fairness"]
    )
    [line] = result.warnings()
    assert "yhat predicts Review (10 audited rows)" in line
    assert json.loads(result.json_path.read_text())["meta"]["warnings"] == [line]
    assert "<dt>Warnings</dt>" in result.html_path.read_text()
    assert f"warning: {line}" in result.summary()
