"""What an audit leaves besides the report: skops models, predictions.csv with row ids, and an
output directory that is never silently mixed with an earlier run's files."""

import json

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import AuditPlan, run_audit
from trustlab.audit.models import ZOO_NAMES, load_classifier
from trustlab.data import load_dataset
from trustlab.errors import InputError


def small_table(n=240, seed=0):
    rng = np.random.default_rng(seed)
    group = rng.choice(["north", "south"], size=n)
    x = rng.normal(size=n)
    y = np.where(x < -0.4, "low", np.where(x < 0.4, "mid", "high"))
    flip = rng.random(n) < np.where(group == "north", 0.1, 0.35)
    pred = np.where(flip, rng.choice(["low", "mid", "high"], size=n), y)
    kind = rng.choice(["a", "b"], size=n)
    return pd.DataFrame({"x": x, "kind": kind, "grp": group, "y": y, "yhat": pred})


# --- item 1: trained models and predictions are saved -----------------------------------------


def test_each_zoo_model_is_saved_and_loads_back_with_the_same_predictions(default_audit):
    ctx = default_audit.context
    out = default_audit.html_path.parent
    assert set(default_audit.model_paths) == set(ZOO_NAMES)
    for name in ZOO_NAMES:
        path = default_audit.model_paths[name]
        assert path == out / "models" / f"{name}.skops" and path.is_file()
        loaded = load_classifier(path)  # trustlab's safe reader: only library types
        np.testing.assert_array_equal(loaded.predict(ctx.X_test), ctx.predictions[name])
        np.testing.assert_allclose(
            loaded.predict_proba(ctx.X_test), ctx.models[name].predict_proba(ctx.X_test)
        )


def test_predictions_csv_joins_back_to_the_input_rows(default_audit):
    ctx = default_audit.context
    path = default_audit.predictions_path
    assert path == default_audit.html_path.parent / "predictions.csv"
    saved = pd.read_csv(path, keep_default_na=False)
    probability_columns = [f"{m}:proba:{k}" for m in ZOO_NAMES for k in ctx.labels]
    assert list(saved.columns) == ["row", "vote", "region", *ZOO_NAMES, *probability_columns]
    assert len(saved) == ctx.n_test and saved["row"].is_unique
    chile = load_dataset("chile").frame
    joined = chile.loc[saved["row"]]
    assert joined["vote"].tolist() == saved["vote"].tolist()
    assert joined["region"].tolist() == saved["region"].tolist()
    for name in ZOO_NAMES:
        assert saved[name].tolist() == ctx.predictions[name].tolist()
        columns = [f"{name}:proba:{k}" for k in ctx.labels]
        np.testing.assert_allclose(saved[columns].to_numpy(), ctx.probabilities[name], atol=1e-12)


def test_saved_files_are_listed_in_report_json_and_shown_in_the_report(default_audit):
    report = json.loads(default_audit.json_path.read_text())
    expected = ["predictions.csv", *(f"models/{name}.skops" for name in ZOO_NAMES)]
    assert report["meta"]["files"] == expected
    overview = {s["id"]: s for s in report["sections"]}["overview"]["data"]
    assert overview["files"] == {
        "predictions": "predictions.csv",
        "models": {name: f"models/{name}.skops" for name in ZOO_NAMES},
    }
    html = default_audit.html_path.read_text()
    assert "Files saved beside this report" in html
    assert all(name in html for name in expected)
    as_json = default_audit.to_dict()
    assert as_json["predictions_path"] == str(default_audit.predictions_path)
    assert as_json["model_paths"] == {k: str(v) for k, v in default_audit.model_paths.items()}
    assert "predictions.csv" in default_audit.summary()


def test_row_ids_are_the_input_index_after_dropping_rows(tmp_path):
    table = small_table().set_index(pd.Index(np.arange(240) * 10 + 7, name="id"))
    table.loc[[7, 17], "y"] = None  # the first two rows are dropped
    result = run_audit(table, label="y", group="grp", pred="yhat", out=tmp_path, sections=[])
    saved = pd.read_csv(result.predictions_path)
    assert saved["row"].tolist() == table.index[2:].tolist()
    assert saved["yhat"].tolist() == table["yhat"].iloc[2:].tolist()


def test_row_ids_of_a_file_are_its_data_row_numbers(tmp_path):
    table = small_table().drop(columns="yhat")
    table.to_csv(tmp_path / "data.csv", index=False)
    result = run_audit(
        tmp_path / "data.csv", label="y", group="grp", out=tmp_path / "out", sections=[]
    )
    saved = pd.read_csv(result.predictions_path)
    assert saved["row"].tolist() == sorted(saved["row"].tolist())
    assert table.loc[saved["row"], "y"].tolist() == saved["y"].tolist()
    assert table.loc[saved["row"], "x"].to_numpy() == pytest.approx(
        result.context.X_test["x"].to_numpy()
    )


def test_a_given_model_is_not_copied_but_its_predictions_are_saved(tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    table = small_table()
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(table[["x"]], table["y"])
    result = run_audit(table, label="y", group="grp", model=model, out=tmp_path, sections=[])
    assert result.model_paths == {} and not (tmp_path / "models").exists()
    saved = pd.read_csv(result.predictions_path)
    name = "DecisionTreeClassifier"
    assert saved[name].tolist() == model.predict(table[["x"]]).tolist()
    assert f"{name}:proba:high" in saved.columns


# --- item 3: an output directory with an earlier audit ----------------------------------------


def test_rerun_into_the_same_out_is_refused_before_any_work(tmp_path):
    table = small_table()
    first = run_audit(table, label="y", group="grp", pred="yhat", out=tmp_path, sections=[])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls = []
    with pytest.raises(InputError, match=r"^out: .* already holds an audit \(report.json of"):
        run_audit(
            table.assign(yhat="low"),
            label="y",
            group="grp",
            pred="yhat",
            out=tmp_path,
            progress=lambda *step: calls.append(step),
        )
    assert calls == []  # refused before loading anything
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert first.json_path.is_file()


def test_overwrite_replaces_only_the_audits_own_files(tmp_path):
    table = small_table(n=120).drop(columns="yhat")
    run_audit(table, label="y", group="grp", out=tmp_path, sections=[])  # the zoo: models/
    assert len(list((tmp_path / "models").glob("*.skops"))) == len(ZOO_NAMES)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "models" / "README").write_text("mine too")
    scored = small_table(n=120)
    again = run_audit(
        scored, label="y", group="grp", pred="yhat", out=tmp_path, overwrite=True, sections=[]
    )
    assert list((tmp_path / "models").iterdir()) == [tmp_path / "models" / "README"]
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert list(pd.read_csv(again.predictions_path).columns) == ["row", "y", "grp", "yhat"]
    meta = json.loads(again.json_path.read_text())["meta"]
    assert meta["models"] == ["yhat"]
    assert meta["rows"] == {"audited": 120}  # nothing trained: no "train 0" (review 55)


def test_overwrite_never_deletes_the_model_being_audited_or_model_files_it_did_not_write(
    tmp_path,
):
    table = small_table(n=120).drop(columns="yhat")
    run_audit(table, label="y", group="grp", out=tmp_path, sections=[])  # the zoo: models/
    models = tmp_path / "models"
    mine = models / "mine.skops"  # a model the user keeps there
    mine.write_bytes((models / "gradient_boosting.skops").read_bytes())
    audited = models / "random_forest.skops"
    again = run_audit(
        table, label="y", group="grp", model=audited, out=tmp_path, overwrite=True, sections=[]
    )
    assert sorted(p.name for p in models.iterdir()) == ["mine.skops", "random_forest.skops"]
    assert load_classifier(audited).predict(table[["x", "kind"]]).shape == (120,)
    meta = json.loads(again.json_path.read_text())["meta"]
    assert meta["models"] == ["random_forest"] and meta["files"] == ["predictions.csv"]
    assert meta["rows"] == {"audited": 120}


def test_an_unfinished_earlier_audit_is_named_as_such(tmp_path):
    (tmp_path / "report.json").write_text(
        json.dumps({"meta": {"dataset": "chile", "created": "2025-01-01"}, "complete": False})
    )
    with pytest.raises(InputError, match=r"report.json of chile, 2025-01-01, unfinished"):
        run_audit(small_table(), label="y", group="grp", pred="yhat", out=tmp_path)


def test_other_files_in_out_do_not_count_as_an_audit(tmp_path):
    (tmp_path / "result.json").write_text("{}")  # e.g. another command's output
    run_audit(small_table(), label="y", group="grp", pred="yhat", out=tmp_path, sections=[])


# --- item 3: --encoding and the plan ----------------------------------------------------------


def test_encoding_reads_a_latin1_csv(tmp_path):
    table = small_table().assign(grp=lambda t: t["grp"].map({"north": "Nördlich", "south": "Süd"}))
    path = tmp_path / "latin1.csv"
    table.to_csv(path, index=False, encoding="latin-1")
    with pytest.raises(InputError, match="--encoding"):
        run_audit(path, label="y", group="grp", pred="yhat", out=tmp_path / "a")
    result = run_audit(
        path,
        label="y",
        group="grp",
        pred="yhat",
        encoding="latin-1",
        out=tmp_path / "b",
        sections=[],
    )
    assert sorted(set(result.context.g_test)) == ["Nördlich", "Süd"]


def test_plan_comes_once_after_the_checks_and_before_training(tmp_path):
    events = []
    run_audit(
        small_table(n=120).drop(columns="yhat"),
        label="y",
        group="grp",
        out=tmp_path,
        sections=["overview"],
        progress=lambda description, done, total: events.append(description),
        plan=events.append,
    )
    plans = [e for e in events if isinstance(e, AuditPlan)]
    assert len(plans) == 1
    plan = plans[0]
    assert (plan.mode, plan.models, plan.n_train, plan.n_test) == ("zoo", list(ZOO_NAMES), 60, 60)
    assert plan.rows == 120 and plan.sections == ["overview"]
    assert events.index(plan) < events.index(f"training {ZOO_NAMES[0]}")
    assert plan.describe() == (
        "auditing data frame: training 3 models on 60 rows, then the report (overview) on 60 rows"
    )


def test_a_plan_that_refuses_stops_before_anything_is_written(tmp_path):
    def refuse(plan):
        raise InputError("--yes: too big", argument="--yes")

    with pytest.raises(InputError, match="too big"):
        run_audit(small_table(), label="y", group="grp", out=tmp_path / "out", plan=refuse)
    assert not (tmp_path / "out").exists()  # not even an empty folder


def test_a_model_named_like_the_label_does_not_hide_the_label(tmp_path):
    import skops.io
    from sklearn.tree import DecisionTreeClassifier

    table = small_table()
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(table[["x"]], table["y"])
    skops.io.dump(model, tmp_path / "y.skops")  # the model's name is the file's stem: "y"
    result = run_audit(
        table, label="y", group="grp", model=tmp_path / "y.skops", out=tmp_path / "o", sections=[]
    )
    saved = pd.read_csv(result.predictions_path)
    assert saved["y"].tolist() == table["y"].tolist()
    assert saved["pred:y"].tolist() == model.predict(table[["x"]]).tolist()
