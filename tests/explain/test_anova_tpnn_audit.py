"""The audit section "Glass-box model (ANOVA-TPNN)": fitted on the audit's training rows (with
missing values filled), its accuracy beside the zoo's, its strongest components drawn."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

from trustlab.audit.context import AuditContext
from trustlab.audit.models import make_pipeline
from trustlab.audit.sections import anova_tpnn as section
from trustlab.data import load_dataset
from trustlab.report import Figure, Report, Table


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def chile_context(with_train=True) -> AuditContext:
    """The chile data split as the audit splits it, with one zoo model (logistic regression)."""
    dataset = load_dataset("chile")
    X, y, g = dataset.X, dataset.y, dataset.groups()
    X_train, X_test, y_train, y_test, g_train, g_test = train_test_split(
        X, y, g, test_size=0.5, random_state=0, stratify=y
    )
    zoo = make_pipeline(LogisticRegression(max_iter=1000), X_train).fit(X_train, y_train)
    if not with_train:
        X_train, y_train, g_train = X_train.iloc[:0], y_train[:0], g_train[:0]
    return AuditContext(
        dataset="chile",
        label="vote",
        group="region",
        labels=np.unique(y),
        feature_names=list(X.columns),
        X_train=X_train,
        X_test=X_test,
        y_train=y_train,
        y_test=y_test,
        g_train=g_train,
        g_test=g_test,
        models={"logistic_regression": zoo},
        predictions={"logistic_regression": zoo.predict(X_test)},
        random_state=0,
    )


def synthetic_context(X_train, X_test, y_train, y_test) -> AuditContext:
    """An audit of classes "p"/"q" in one group, with a constant "p" model as the zoo."""
    return AuditContext(
        dataset="synthetic",
        label="y",
        group="g",
        labels=np.array(["p", "q"]),
        feature_names=list(X_train.columns),
        X_train=X_train,
        X_test=X_test,
        y_train=y_train,
        y_test=y_test,
        g_train=np.zeros(len(X_train)),
        g_test=np.zeros(len(X_test)),
        models={},
        predictions={"constant": np.full(len(X_test), "p")},
        random_state=0,
    )


@pytest.fixture(scope="module")
def built():
    ctx = chile_context()
    return ctx, section.build(ctx)


def test_section_reports_accuracy_beside_the_zoo(built):
    ctx, result = built
    models = result.data["models"]
    assert set(models) == {"logistic_regression", "anova_tpnn"}
    expected = accuracy_score(ctx.y_test, ctx.predictions["logistic_regression"])
    assert models["logistic_regression"]["accuracy"] == pytest.approx(expected)
    # the glass-box model is about as accurate as logistic regression on this data
    assert models["anova_tpnn"]["accuracy"] >= expected - 0.05
    table = next(b for b in result.blocks if isinstance(b, Table))
    assert [row[0] for row in table.rows] == ["logistic_regression", "anova_tpnn"]


def test_section_draws_the_strongest_components(built):
    _, result = built
    ranked = [c["name"] for c in result.data["importance"]["components"]]
    figures = [b for b in result.blocks if isinstance(b, Figure)]
    assert len(figures) == 1 + section.TOP_COMPONENTS
    for figure, name in zip(figures[1:], ranked, strict=False):
        assert figure.caption.endswith(f" {name}")
    assert ranked[0] == "statusquo"  # the attitude to the regime decides the vote
    assert len(result.data["components"]) == 6 + 15


def test_section_fills_missing_values_and_says_so(built):
    ctx, result = built
    assert ctx.X_train.isna().any().any()
    assert any("missing value" in note for note in result.data["notes"])


def test_section_is_json_safe_and_renders(built, tmp_path):
    _, result = built
    report = Report("test", {})
    report.add(result)
    html, data = report.write(tmp_path)
    assert "Glass-box model (ANOVA-TPNN)" in html.read_text()
    sections = json.loads(data.read_text())["sections"]
    assert sections[0]["data"]["models"]["anova_tpnn"]["accuracy"] > 0.5


def test_section_does_not_apply_without_training_rows():
    assert section.build(chile_context(with_train=False)) is None


def test_columns_without_two_values_on_the_training_rows_are_left_out_with_a_note():
    """A split can leave a column constant, or with no value at all, on the training rows: the
    section fits on the other columns (it failed: "feature 'b' to vary", or an IndexError from
    the most frequent level of an empty column)."""
    rng = np.random.default_rng(0)

    def table(n):
        return pd.DataFrame(
            {
                "a": rng.normal(size=n),
                "b": rng.normal(size=n),
                "c": rng.choice(["u", "v"], n).astype(object),
                "d": rng.choice(["u", "v"], n).astype(object),
            }
        )

    X_train, X_test = table(60), table(20)
    X_train["b"], X_train["c"], X_train["d"] = 1.0, None, "u"
    y_train, y_test = np.where(X_train.a > 0, "p", "q"), np.where(X_test.a > 0, "p", "q")
    result = section.build(synthetic_context(X_train, X_test, y_train, y_test))
    assert result.data["components"] == ["a"]
    assert any("b, c, d: at most one value on the training rows" in n for n in result.data["notes"])


def test_many_features_fit_the_strongest_pairs_only_with_a_note():
    """Every pair of 300 features is 44,850 components: a default audit of a wide table ran for
    many minutes in this section. Beyond MAX_ALL_PAIRS_FEATURES only the screened pairs are fit."""
    rng = np.random.default_rng(1)
    d = section.MAX_ALL_PAIRS_FEATURES + 4
    X_train, X_test = (
        pd.DataFrame(rng.normal(size=(n, d)), columns=[f"f{j}" for j in range(d)])
        for n in (120, 40)
    )
    y_train = np.where(X_train.f0 * X_train.f1 > 0, "p", "q")
    y_test = np.where(X_test.f0 * X_test.f1 > 0, "p", "q")
    result = section.build(synthetic_context(X_train, X_test, y_train, y_test))
    pairs = [c for c in result.data["components"] if " & " in c]
    assert len(result.data["components"]) - len(pairs) == d
    assert 0 < len(pairs) <= section.MAX_INTERACTIONS
    assert any(f"{d * (d - 1) // 2:,}" in note for note in result.data["notes"])
