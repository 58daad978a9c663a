"""What an audit says in the modes that train nothing (review 54b).

- A given model that is no tree ensemble (a logistic regression) was planned with the FastPD
  section ('the report (overview, fairness, fastpd)') although none was built, and the report
  said nothing of it: the plan now leaves it out and the report says why.
- With a pred column or a given model, a column holding a different whole number on every row
  was called 'a feature of the models' with '--exclude' as the cure, though nothing is trained
  and --exclude is refused there: the note is for the default models only.
- With a pred column or a given model every row is audited: the fairness section's unfair
  fraction table and its small-group note spoke of 'test rows' and 'the test split'.
- An audit of the predictions.csv in its own --out was refused only after the default models
  were trained: now before any work.
"""

import html

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from trustlab.audit import AuditPlan, run_audit
from trustlab.errors import InputError


def table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.normal(size=n)
    y = np.where(x + rng.normal(scale=0.7, size=n) > 0, "yes", "no")
    g = np.where(np.arange(n) < 20, "small", np.where(np.arange(n) % 2 == 0, "a", "b"))
    flip = rng.random(n) < 0.2
    pred = np.where(flip, np.where(y == "yes", "no", "yes"), y)
    return pd.DataFrame({"id": np.arange(700, 700 + n), "x": x, "g": g, "y": y, "p": pred})


def audit(model, tmp_path, sections, **kwargs):
    events = []
    result = run_audit(
        table(),
        label="y",
        group="g",
        model=model,
        out=tmp_path,
        sections=sections,
        progress=lambda description, done, total: events.append((description, done, total)),
        plan=events.append,
        **kwargs,
    )
    return result, events


def test_a_model_that_is_no_tree_ensemble_is_planned_without_fastpd_and_told_why(tmp_path):
    model = LogisticRegression().fit(table()[["x"]], table().y)
    result, events = audit(model, tmp_path, ["overview", "fastpd"])
    (plan,) = [e for e in events if isinstance(e, AuditPlan)]
    assert plan.sections == ["overview"]
    assert [s.id for s in result.report.sections] == ["overview"]
    note = (
        "No FastPD section: FastPD explains tree ensembles only (scikit-learn, xgboost or "
        "LightGBM trees, on numeric features or as a Pipeline's last step), and the audited "
        "model (LogisticRegression) is not one."
    )
    assert note in result.context.notes
    assert note in html.unescape(result.html_path.read_text(encoding="utf-8"))
    steps = [e for e in events if isinstance(e, tuple)]
    # once the model is read, the count of steps leaves fastpd out too
    assert steps[-2:] == [("writing the report", 4, 5), ("done", 5, 5)]


def test_fastpd_alone_for_a_model_that_is_no_tree_ensemble_is_refused(tmp_path):
    model = LogisticRegression().fit(table()[["x"]], table().y)
    with pytest.raises(InputError) as err:
        audit(model, tmp_path / "out", ["fastpd"])
    assert err.value.argument == "sections"
    assert str(err.value).startswith("sections: expected a section this audit builds, got fastpd")
    assert not (tmp_path / "out").exists()


def test_a_tree_model_keeps_fastpd_in_its_plan(tmp_path):
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(table()[["x"]], table().y)
    result, events = audit(model, tmp_path, ["overview", "fastpd"])
    (plan,) = [e for e in events if isinstance(e, AuditPlan)]
    assert plan.sections == ["overview", "fastpd"]
    assert [s.id for s in result.report.sections] == ["overview", "fastpd"]
    assert not any(n.startswith("No FastPD section") for n in result.context.notes)


@pytest.mark.parametrize("mode", ["pred", "model"])
def test_no_row_id_note_where_nothing_is_trained(tmp_path, mode):
    kwargs = {"pred": "p"} if mode == "pred" else {}
    model = LogisticRegression().fit(table()[["x"]], table().y) if mode == "model" else None
    result, _ = audit(model, tmp_path, [], **kwargs)
    assert not any("row id does" in n for n in result.context.notes)
    trained = run_audit(table(), label="y", group="g", out=tmp_path / "zoo", sections=[])
    assert any("Column 'id' holds a different whole number" in n for n in trained.context.notes)


def test_the_fairness_section_names_the_audited_rows_where_every_row_is_audited(tmp_path):
    result, _ = audit(None, tmp_path, ["fairness"], pred="p")
    page = html.unescape(result.html_path.read_text(encoding="utf-8"))
    assert "(rows audited)" in page and "(test rows)" not in page
    assert (
        "Small g groups among the audited rows: a (50 rows), b (50 rows), small (20 rows)." in page
    )
    assert "test split" not in page


def test_auditing_the_predictions_csv_of_out_is_refused_before_any_training(tmp_path):
    out = tmp_path / "out"
    run_audit(table(), label="y", group="g", pred="p", out=out, sections=[])
    events = []
    with pytest.raises(InputError) as err:
        run_audit(
            out / "predictions.csv",
            label="y",
            group="g",
            out=out,
            overwrite=True,
            sections=[],
            progress=lambda description, done, total: events.append(description),
        )
    assert err.value.argument == "out"
    assert "predictions.csv is a file being audited" in str(err.value)
    assert events == []  # not even the table was read, nor a model trained
