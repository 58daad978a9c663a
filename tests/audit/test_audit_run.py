"""run_audit: the three modes, the files it writes, and that its numbers are the right ones."""

import json
import re
import sys
import types
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from trustlab._results import to_jsonable
from trustlab.audit import AuditContext, AuditResult, run_audit
from trustlab.audit.models import ZOO_NAMES
from trustlab.data import load_dataset
from trustlab.errors import InputError
from trustlab.report.render import format_cell

# --- helpers ----------------------------------------------------------------------------------


def small_table(n=240, seed=0):
    """A 3-class table with two groups, a numeric and a text feature, and a noisy prediction."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["north", "south"], size=n)
    x = rng.normal(size=n)
    kind = rng.choice(["a", "b"], size=n)
    y = np.where(x < -0.4, "low", np.where(x < 0.4, "mid", "high"))
    flip = rng.random(n) < np.where(group == "north", 0.1, 0.35)
    pred = np.where(flip, rng.choice(["low", "mid", "high"], size=n), y)
    return pd.DataFrame({"x": x, "kind": kind, "grp": group, "y": y, "yhat": pred})


def dcp(y, pred, groups, labels, seed):
    from trustlab.fairness import multiclass_dcp

    return multiclass_dcp(y, pred, groups, labels=labels, random_state=seed)


def sections_by_id(json_path):
    return {s["id"]: s for s in json.loads(json_path.read_text())["sections"]}


class _TableCells(HTMLParser):
    """The text of every <td> in each section, in order."""

    def __init__(self):
        super().__init__()
        self.cells: dict[str, list[str]] = {}
        self._section = None
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self._section = attrs["id"]
            self.cells[self._section] = []
        elif tag == "td":
            self._in_cell = True
            self.cells[self._section].append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_cell = False

    def handle_data(self, data):
        if self._in_cell:
            self.cells[self._section][-1] += data


def numbers_in(value):
    """Every number inside a JSON value."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [value]
    items = value.values() if isinstance(value, dict) else value
    return [x for item in items for x in numbers_in(item)]


# --- the default audit (shared, built once) --------------------------------------------------


def test_default_audit_writes_html_and_json(default_audit):
    assert isinstance(default_audit, AuditResult)
    assert default_audit.html_path.name == "report.html" and default_audit.html_path.is_file()
    assert default_audit.json_path.name == "report.json" and default_audit.json_path.is_file()
    assert default_audit.html_path.read_text().startswith("<!DOCTYPE html>")


def test_json_file_is_the_report(default_audit):
    assert json.loads(default_audit.json_path.read_text()) == default_audit.report.to_dict()
    assert default_audit.report.to_dict()["complete"] is True


def test_default_audit_is_chile_with_the_zoo(default_audit):
    ctx = default_audit.context
    chile = load_dataset("chile")
    assert isinstance(ctx, AuditContext)
    assert (ctx.dataset, ctx.label, ctx.group, ctx.mode) == ("chile", "vote", "region", "zoo")
    assert ctx.feature_names == list(chile.features)
    assert ctx.n_train + ctx.n_test == len(chile.frame)
    assert tuple(ctx.models) == ZOO_NAMES == tuple(ctx.predictions)
    assert ctx.labels.tolist() == ["A", "N", "U", "Y"]


def test_zoo_models_are_prep_then_model_pipelines(default_audit):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier

    for model in default_audit.context.models.values():
        assert [name for name, _ in model.steps] == ["prep", "model"]
        assert isinstance(model.named_steps["prep"], ColumnTransformer)
    forest = default_audit.context.models["random_forest"].named_steps["model"]
    assert isinstance(forest, RandomForestClassifier)
    assert (forest.n_estimators, forest.min_samples_leaf) == (200, 5)


def test_predictions_are_the_models_predictions_on_the_test_rows(default_audit):
    ctx = default_audit.context
    for name, model in ctx.models.items():
        np.testing.assert_array_equal(ctx.predictions[name], model.predict(ctx.X_test))


def test_test_rows_are_the_datasets_rows(default_audit):
    ctx = default_audit.context
    frame = load_dataset("chile").frame
    both = pd.concat([ctx.X_train, ctx.X_test]).assign(
        vote=np.concatenate([ctx.y_train, ctx.y_test]),
        region=np.concatenate([ctx.g_train, ctx.g_test]),
    )
    key = ["population", "age", "income", "statusquo", "sex", "education", "vote", "region"]
    expected = frame[key].astype(str).value_counts().sort_index()
    assert both[key].astype(str).value_counts().sort_index().equals(expected)


def test_split_is_stratified_by_label(default_audit):
    ctx = default_audit.context
    train = pd.Series(ctx.y_train).value_counts(normalize=True)
    test = pd.Series(ctx.y_test).value_counts(normalize=True)
    assert (train - test).abs().max() < 2 / ctx.n_test


def test_probabilities_have_columns_in_label_order(default_audit):
    ctx = default_audit.context
    for name in ZOO_NAMES:
        proba = ctx.probabilities[name]
        assert proba.shape == (ctx.n_test, len(ctx.labels))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    # Logistic regression predicts the most probable class: the columns must line up.
    lr = ctx.probabilities["logistic_regression"]
    agree = ctx.labels[lr.argmax(axis=1)] == ctx.predictions["logistic_regression"]
    assert agree.mean() > 0.99


def test_dcp_numbers_equal_the_fairness_api_on_the_test_rows(default_audit):
    ctx = default_audit.context
    fairness = sections_by_id(default_audit.json_path)["fairness"]
    assert fairness["status"] == "ok"
    for name, pred in ctx.predictions.items():
        expected = dcp(ctx.y_test, pred, ctx.g_test, ctx.labels, ctx.random_state)
        stored = fairness["data"]["models"][name]
        assert stored["result"] == to_jsonable(expected.to_dict())
        assert stored["lower"] == pytest.approx(expected.known.lower, abs=1e-12)
        assert stored["upper"] == pytest.approx(expected.known.upper, abs=1e-12)
        assert stored["aggregate_estimate"] == pytest.approx(expected.aggregate.estimate, abs=1e-12)


def test_overview_numbers_equal_direct_counts(default_audit):
    ctx = default_audit.context
    overview = sections_by_id(default_audit.json_path)["overview"]["data"]
    for name, pred in ctx.predictions.items():
        assert overview["models"][name]["accuracy"] == pytest.approx(np.mean(pred == ctx.y_test))
        recalls = [np.mean(pred[ctx.y_test == k] == k) for k in np.unique(ctx.y_test)]
        assert overview["models"][name]["balanced_accuracy"] == pytest.approx(np.mean(recalls))
    frame = load_dataset("chile").frame
    counts = pd.crosstab(frame["region"], frame["vote"])
    for row in overview["groups"]:
        assert row["label_counts"] == {k: int(v) for k, v in counts.loc[row["group"]].items()}
        assert row["rows"] == int(counts.loc[row["group"]].sum())


def test_every_number_in_the_html_tables_is_in_the_json(default_audit):
    parser = _TableCells()
    parser.feed(default_audit.html_path.read_text())
    sections = sections_by_id(default_audit.json_path)
    checked = 0
    for section_id, cells in parser.cells.items():
        known = {format_cell(x) for x in numbers_in(sections[section_id]["data"])}
        for cell in cells:
            if re.fullmatch(r"-?[\d,]+(\.\d+)?", cell.strip()):
                assert cell.strip() in known, (section_id, cell)
                checked += 1
    assert checked > 50


def test_headline_and_summary_name_every_model(default_audit):
    headline = default_audit.to_dict()["headline"]
    assert set(headline) == set(ZOO_NAMES)
    for numbers in headline.values():
        assert 0 <= numbers["dcp_lower"] <= numbers["dcp_upper"] <= 1
        assert 0 < numbers["accuracy"] <= 1
    summary = default_audit.summary()
    assert all(name in summary for name in ZOO_NAMES)
    json.dumps(default_audit.to_dict(), allow_nan=False)


# --- user tables -----------------------------------------------------------------------------


def test_user_csv_with_predictions_audits_every_row(tmp_path):
    table = small_table()
    path = tmp_path / "scored.csv"
    table.to_csv(path, index=False)
    result = run_audit(path, label="y", group="grp", pred="yhat", out=tmp_path / "out")
    ctx = result.context
    assert (ctx.mode, ctx.n_test, ctx.n_train, ctx.models) == ("predictions", len(table), 0, {})
    assert ctx.dataset == "scored.csv"
    expected = dcp(table["y"], table["yhat"], table["grp"], ["high", "low", "mid"], 0)
    stored = sections_by_id(result.json_path)["fairness"]["data"]["models"]["yhat"]
    assert stored["result"] == to_jsonable(expected.to_dict())


def test_numeric_labels_and_groups_are_audited(tmp_path):
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 150)
    table = pd.DataFrame(
        {"y": y, "g": rng.integers(1, 4, 150), "p": (y + (rng.random(150) < 0.3)) % 3}
    )
    result = run_audit(table, label="y", group="g", pred="p", out=tmp_path)
    assert result.context.labels.tolist() == [0, 1, 2]
    sections = sections_by_id(result.json_path)
    fairness = sections["fairness"]
    assert fairness["status"] == "ok" and fairness["data"]["groups"] == [1, 2, 3]
    expected = dcp(table["y"], table["p"], table["g"], [0, 1, 2], 0)
    assert fairness["data"]["models"]["p"]["result"] == to_jsonable(expected.to_dict())
    # review 65: the groups as the DCP result and the overview list them (ints, not '1'); the
    # group sizes keep string keys (JSON object keys)
    assert [g["group"] for g in sections["overview"]["data"]["groups"]] == [1, 2, 3]
    assert list(fairness["data"]["group_sizes"]) == ["1", "2", "3"]


def test_group_sizes_are_counted_and_small_groups_flagged(tmp_path):
    table = small_table(n=500)
    table.loc[table.index[:30], "grp"] = "islands"  # a third group of 30 rows
    result = run_audit(table, label="y", group="grp", pred="yhat", out=tmp_path)
    fairness = sections_by_id(result.json_path)["fairness"]
    expected = table["grp"].value_counts().to_dict()
    assert fairness["data"]["group_sizes"] == expected
    html = result.html_path.read_text()
    small = [g for g, n in expected.items() if n < 100]
    assert small == ["islands"]
    assert "Small grp groups among the audited rows: islands (30 rows)" in html  # pred: every row
    table.loc[table.index[30], "grp"] = "rock"  # a group of one row: "1 row", not "1 rows"
    result = run_audit(table, label="y", group="grp", pred="yhat", out=tmp_path / "one")
    assert "islands (30 rows), rock (1 row)." in result.html_path.read_text()


def test_user_parquet_is_read(tmp_path):
    path = tmp_path / "scored.parquet"
    small_table().to_parquet(path)
    result = run_audit(path, label="y", group="grp", pred="yhat", out=tmp_path, sections=[])
    assert result.context.n_test == 240


def test_user_csv_with_a_skops_model(tmp_path):
    import skops.io as sio
    from sklearn.tree import DecisionTreeClassifier

    from trustlab.audit.models import make_pipeline

    table = small_table()
    features = table[["x", "kind"]]
    model = make_pipeline(DecisionTreeClassifier(max_depth=2, random_state=0), features)
    model.fit(features, table["y"])
    sio.dump(model, tmp_path / "tree.skops")
    table.drop(columns="yhat").to_csv(tmp_path / "data.csv", index=False)
    result = run_audit(
        tmp_path / "data.csv",
        label="y",
        group="grp",
        model=tmp_path / "tree.skops",
        out=tmp_path / "out",
        sections=["overview"],
    )
    ctx = result.context
    assert ctx.mode == "model" and list(ctx.models) == ["tree"]
    assert ctx.feature_names == ["x", "kind"]
    np.testing.assert_array_equal(ctx.predictions["tree"], model.predict(features))
    overview = sections_by_id(result.json_path)["overview"]["data"]
    accuracy = np.mean(model.predict(features) == table["y"])
    assert overview["models"]["tree"]["accuracy"] == pytest.approx(accuracy)


@pytest.fixture(scope="module")
def small_zoo_audit(tmp_path_factory):
    """The default zoo trained on a small user table with gaps in its features."""
    table = small_table(n=120).drop(columns="yhat")
    table.loc[[0, 7], "x"] = np.nan
    table.loc[[3], "kind"] = None
    calls = []
    result = run_audit(
        table,
        label="y",
        group="grp",
        out=tmp_path_factory.mktemp("small_zoo"),
        sections=["overview"],
        random_state=3,
        progress=lambda description, done, total: calls.append((description, done, total)),
    )
    return table, result, calls


def test_zoo_on_a_user_table_leaves_the_group_out_by_default(small_zoo_audit):
    _, result, _ = small_zoo_audit
    assert result.context.feature_names == ["x", "kind"]
    assert result.context.mode == "zoo"
    assert (result.context.n_train, result.context.n_test) == (60, 60)


def test_missing_feature_values_are_imputed(small_zoo_audit):
    _, result, _ = small_zoo_audit
    assert result.context.n_train + result.context.n_test == 120  # no row lost
    assert any("imputed" in note and "x: 2" in note for note in result.context.notes)


@pytest.mark.parametrize(
    ("group", "group_as_feature", "has_group_feature"),
    [("region", None, False), ("sex", None, True), ("sex", False, False), ("region", True, True)],
)
def test_group_is_a_feature_only_when_the_data_declares_it_or_asked(
    tmp_path, group, group_as_feature, has_group_feature
):
    from sklearn.dummy import DummyClassifier

    chile = load_dataset("chile")
    model = DummyClassifier(strategy="stratified", random_state=0).fit(
        np.zeros((4, 1)), list("ANUY")
    )
    result = run_audit(
        "chile",
        group=group,
        model=model,
        group_as_feature=group_as_feature,
        out=tmp_path,
        sections=[],
    )
    assert (group in result.context.feature_names) is has_group_feature
    assert set(result.context.feature_names) - {group} == set(chile.features) - {group}


def test_rows_missing_label_or_group_are_dropped_with_a_note(tmp_path):
    table = small_table()
    table.loc[[0, 1, 2], "y"] = None
    table.loc[[2, 5], "grp"] = None
    result = run_audit(
        table, label="y", group="grp", pred="yhat", out=tmp_path, sections=["overview"]
    )
    assert result.context.n_test == 240 - 4
    notes = sections_by_id(result.json_path)["overview"]["data"]["notes"]
    assert any("Dropped 4 of 240 rows" in note for note in notes)
    assert "Dropped 4 of 240 rows" in result.html_path.read_text()
    assert "  note: Dropped 4 of 240 rows" in result.summary()  # the CLI prints it too


# --- bad input -------------------------------------------------------------------------------


def test_missing_label_column_raises_naming_it(tmp_path):
    with pytest.raises(InputError, match=r"^label: .*'nosuch'"):
        run_audit(small_table(), label="nosuch", group="grp", pred="yhat", out=tmp_path)


def test_user_table_without_label_or_group_raises(tmp_path):
    with pytest.raises(InputError, match=r"^label: expected the name of the label column"):
        run_audit(small_table(), group="grp", out=tmp_path)
    with pytest.raises(InputError, match=r"^group: expected the name of the group column"):
        run_audit(small_table(), label="y", out=tmp_path)


def test_unknown_dataset_or_file_raises(tmp_path):
    with pytest.raises(InputError, match=r"^data: expected a bundled dataset name \(chile, logan"):
        run_audit("no_such_data.csv", out=tmp_path)


def test_pickle_without_trust_raises(tmp_path):
    import joblib
    from sklearn.dummy import DummyClassifier

    joblib.dump(DummyClassifier().fit([[0], [1]], ["a", "b"]), tmp_path / "m.pkl")
    with pytest.raises(InputError, match="--trust-pickle"):
        run_audit(small_table(), label="y", group="grp", model=tmp_path / "m.pkl", out=tmp_path)


def test_one_class_or_one_group_raises(tmp_path):
    table = small_table()
    with pytest.raises(InputError, match="^group: expected at least 2 groups"):
        run_audit(table.assign(grp="all"), label="y", group="grp", pred="yhat", out=tmp_path)
    with pytest.raises(InputError, match="^label: expected at least 2 classes"):
        run_audit(table.assign(y="a", yhat="a"), label="y", group="grp", pred="yhat", out=tmp_path)
    # a second class only in the predictions: every false-positive rate is undefined, and the
    # audit printed a balanced accuracy, DCP and an equalized-odds difference
    one = table.assign(y="low", yhat=np.where(table["x"] < 0, "low", "mid"))
    with pytest.raises(
        InputError, match=r"^label: expected at least 2 classes, got only \['low'\]"
    ):
        run_audit(one, label="y", group="grp", pred="yhat", out=tmp_path)


def test_predictions_of_another_kind_than_labels_raise(tmp_path):
    table = small_table().assign(yhat=1)
    with pytest.raises(InputError, match="^pred: expected predictions of the same kind"):
        run_audit(table, label="y", group="grp", pred="yhat", out=tmp_path)


def test_unusable_output_directory_raises_before_any_work(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(InputError, match="^out: expected a directory that can be created"):
        run_audit(small_table(), label="y", group="grp", out=tmp_path / "file" / "out")


@pytest.mark.parametrize("test_size", [0, 1, 1.5, -0.1])
def test_test_size_must_be_inside_zero_one(tmp_path, test_size):
    with pytest.raises(InputError, match="^test_size"):
        run_audit(small_table(), label="y", group="grp", test_size=test_size, out=tmp_path)


def test_unknown_section_raises(tmp_path):
    with pytest.raises(InputError, match="^sections: expected names among overview, fairness"):
        run_audit(
            small_table(), label="y", group="grp", pred="yhat", sections=["nope"], out=tmp_path
        )


# --- robustness of the run -------------------------------------------------------------------


@pytest.fixture
def crashing_section(monkeypatch):
    """A registered section 'crash' whose build raises."""
    from trustlab.audit import sections

    module = types.ModuleType("trustlab.audit.sections.crash")
    module.TITLE = "Crashing section"

    def build(ctx):
        raise RuntimeError("simulated failure")

    module.build = build
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(sections, "SECTION_MODULES", ["overview", "crash", "fairness"])
    return "crash"


def test_failing_section_is_reported_and_the_others_kept(tmp_path, crashing_section):
    result = run_audit(small_table(), label="y", group="grp", pred="yhat", out=tmp_path)
    stored = sections_by_id(result.json_path)
    assert [s["status"] for s in stored.values()] == ["ok", "failed", "ok"]
    assert stored["crash"]["error"] == "RuntimeError: simulated failure"
    assert stored["crash"]["title"] == "Crashing section"
    html = result.html_path.read_text()
    assert "RuntimeError: simulated failure" in html and 'id="fairness"' in html


def test_partial_json_is_written_after_each_section(tmp_path):
    seen = {}

    def progress(description, done, total):
        if description.startswith("section: fairness"):
            seen["partial"] = json.loads((tmp_path / "report.json").read_text())

    run_audit(
        small_table(),
        label="y",
        group="grp",
        pred="yhat",
        out=tmp_path,
        sections=["overview", "fairness"],
        progress=progress,
    )
    assert seen["partial"]["complete"] is False
    assert [s["id"] for s in seen["partial"]["sections"]] == ["overview"]


def test_progress_counts_up_to_the_total(small_zoo_audit):
    _, _, calls = small_zoo_audit
    done = [c[1] for c in calls]
    total = 1 + len(ZOO_NAMES) + 1 + 1 + 1  # data, models, saving, one section, writing
    assert done == sorted(done) and {c[2] for c in calls} == {total}
    assert calls[-1] == ("done", total, total)
    assert [d for d, _, _ in calls if d.startswith("training")] == [
        f"training {name}" for name in ZOO_NAMES
    ]


def test_same_seed_same_numbers(small_zoo_audit, tmp_path):
    table, first, _ = small_zoo_audit
    again = run_audit(
        table, label="y", group="grp", out=tmp_path, sections=["overview"], random_state=3
    )
    assert again.report.sections[0].data == first.report.sections[0].data
    assert again.report.meta["random_state"] == 3
    for name in ZOO_NAMES:
        np.testing.assert_array_equal(
            again.context.predictions[name], first.context.predictions[name]
        )


# --- inputs that are not class labels, groups missing from the audited rows, the seed --------


def test_a_score_column_as_predictions_is_refused_before_anything_is_written(tmp_path):
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {
            "y": rng.integers(0, 2, 200),
            "g": rng.choice(["a", "b"], 200),
            "score": rng.random(200),  # a probability, not a predicted label
            "points": rng.integers(300, 850, 200),  # an integer score: hundreds of "classes"
        }
    )
    for column in ("score", "points"):
        with pytest.raises(InputError, match="^pred: expected predicted class labels"):
            run_audit(table, label="y", group="g", pred=column, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_predicted_labels_may_be_whole_floats_or_a_class_the_labels_lack(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    table = pd.DataFrame(
        {"y": y, "g": rng.choice(["a", "b"], 200), "as_float": y.astype(float), "yhat": y}
    )
    table.loc[:5, "yhat"] = 2  # a class the audited labels lack (a small test set)
    for column in ("as_float", "yhat"):
        result = run_audit(
            table, label="y", group="g", pred=column, out=tmp_path / column, sections=[]
        )
        assert result.context.n_test == 200


def test_a_continuous_label_is_refused_in_every_mode(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    table = pd.DataFrame(
        {"x": x, "g": rng.choice(["a", "b"], 200), "y": 3 * x + rng.normal(size=200)}
    )
    with pytest.raises(InputError, match="^label: expected class labels"):
        run_audit(table, label="y", group="g", out=tmp_path / "zoo")
    with pytest.raises(InputError, match="^label: expected class labels"):
        run_audit(table.assign(yhat=0), label="y", group="g", pred="yhat", out=tmp_path / "p")
    assert not (tmp_path / "zoo").exists() and not (tmp_path / "p").exists()


def test_a_model_predicting_numbers_is_refused(tmp_path):
    from sklearn.linear_model import LinearRegression

    table = small_table().assign(y=lambda t: (t["x"] > 0).astype(int))
    model = LinearRegression().fit(table[["x"]], table["x"] * 2)
    # scikit-learn's tags name a regressor before it predicts (18ba053d)
    with pytest.raises(InputError, match=r"^model: expected a classifier, got a regressor \("):
        run_audit(table, label="y", group="grp", model=model, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()

    class Untagged:  # no scikit-learn tags: its predictions tell
        def predict(self, X):
            return np.asarray(X["x"], dtype=float) * 2

    with pytest.raises(InputError, match="^model: expected class labels"):
        run_audit(table, label="y", group="grp", model=Untagged(), out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_groups_are_checked_in_the_audited_rows_before_anything_is_written(tmp_path):
    rng = np.random.default_rng(1)
    table = pd.DataFrame(
        {"x": rng.normal(size=100), "y": rng.integers(0, 2, 100), "g": ["a"] * 99 + ["b"]}
    )
    refused = 0
    for seed in range(6):  # where the one "b" row lands depends on the seed
        out = tmp_path / str(seed)
        try:
            result = run_audit(table, label="y", group="g", out=out, random_state=seed, sections=[])
        except InputError as exc:
            assert re.match(r"^group: expected at least 2 groups in the audited rows", str(exc))
            assert not out.exists()
            refused += 1
        else:
            assert set(result.context.g_test) == {"a", "b"}
    assert refused  # the data was chosen so that some seed leaves "b" out of the test rows


def test_the_zoo_split_is_stratified_by_label_and_group(tmp_path):
    rng = np.random.default_rng(2)
    n = 400
    g = np.where(rng.random(n) < 0.15, "small", "large")
    y = np.where(rng.random(n) < np.where(g == "small", 0.8, 0.3), "yes", "no")
    table = pd.DataFrame({"x": rng.normal(size=n), "y": y, "g": g})
    result = run_audit(table, label="y", group="g", out=tmp_path, sections=[], random_state=5)
    ctx = result.context
    train = pd.Series(list(zip(ctx.y_train, ctx.g_train, strict=True))).value_counts()
    test = pd.Series(list(zip(ctx.y_test, ctx.g_test, strict=True))).value_counts()
    assert ((train - test).abs() <= 1).all()  # each label and group pair split in half
    assert not any("stratified" in note for note in ctx.notes)


def test_a_seed_beyond_scikit_learns_limit_is_refused_naming_the_seed(tmp_path):
    table = small_table()
    with pytest.raises(InputError, match=r"^random_state: expected an integer in \[0, 2\*\*32-1\]"):
        run_audit(table, label="y", group="grp", pred="yhat", random_state=2**32, out=tmp_path)
    result = run_audit(
        table,
        label="y",
        group="grp",
        pred="yhat",
        random_state=2**32 - 1,
        out=tmp_path,
        sections=[],
    )
    assert result.context.random_state == 2**32 - 1


def test_empty_and_constant_feature_columns_are_left_out_with_a_note(tmp_path):
    import warnings

    table = small_table(n=120).drop(columns="yhat").assign(blank=np.nan, const=1.0)
    table.loc[[0, 7], "x"] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_audit(
            table, label="y", group="grp", out=tmp_path, sections=["overview", "anova_tpnn"]
        )
    ctx = result.context
    assert ctx.feature_names == ["x", "kind"] and list(ctx.X_train.columns) == ["x", "kind"]
    assert any("blank (empty)" in note and "const (one value)" in note for note in ctx.notes)
    imputed = [note for note in ctx.notes if "imputed" in note]
    assert imputed and "x: 2" in imputed[0] and "blank" not in imputed[0]
    assert not [w for w in caught if "without any observed values" in str(w.message)]
    statuses = {s["id"]: s["status"] for s in json.loads(result.json_path.read_text())["sections"]}
    assert statuses == {"overview": "ok", "anova_tpnn": "ok"}
