"""The audit report section: the default zoo on chile ranked without labels, beside accuracy."""

import json

import numpy as np
import pytest
from scipy import stats
from sklearn.model_selection import train_test_split

from trustlab.audit.context import AuditContext
from trustlab.audit.models import aligned_probabilities, default_zoo, make_pipeline
from trustlab.audit.sections import ranking as section
from trustlab.data import load_dataset
from trustlab.evaluation import SCORES
from trustlab.report import Figure, Paragraph, Report, Table


@pytest.fixture(scope="module")
def context():
    """The default zoo trained on half of chile, probabilities on the other half."""
    dataset = load_dataset("chile")
    X, y, groups = dataset.X, dataset.y, dataset.groups()
    X_train, X_test, y_train, y_test, g_train, g_test = train_test_split(
        X, y, groups, test_size=0.5, random_state=0, stratify=y
    )
    labels = np.unique(y)
    models = {
        name: make_pipeline(estimator, X_train).fit(X_train, y_train)
        for name, estimator in default_zoo(0).items()
    }
    return AuditContext(
        dataset="chile",
        label=dataset.label,
        group=dataset.protected[0],
        labels=labels,
        feature_names=list(dataset.features),
        X_train=X_train,
        X_test=X_test,
        y_train=y_train,
        y_test=y_test,
        g_train=g_train,
        g_test=g_test,
        models=models,
        predictions={name: m.predict(X_test) for name, m in models.items()},
        probabilities={
            name: aligned_probabilities(m, X_test, labels) for name, m in models.items()
        },
        random_state=0,
    )


@pytest.fixture(scope="module")
def built(context):
    return section.build(context)


def test_section_numbers_equal_direct_computation(context, built):
    assert built.id == "ranking"
    nll = built.data["scores"]["nll"]
    names = [row["name"] for row in nll["models"]]
    assert names == list(context.probabilities)
    accuracy = [np.mean(context.predictions[name] == context.y_test) for name in names]
    mean_nll = [-np.mean(np.log(context.probabilities[name].max(axis=1))) for name in names]
    np.testing.assert_allclose([row["accuracy"] for row in nll["models"]], accuracy, atol=1e-12)
    np.testing.assert_allclose([row["score"] for row in nll["models"]], mean_nll, atol=1e-12)
    expected = stats.spearmanr(-np.array(mean_nll), accuracy).statistic
    assert abs(nll["spearman"]["value"] - expected) <= 1e-12
    expected = stats.kendalltau(-np.array(mean_nll), accuracy).statistic
    assert abs(nll["kendall"]["value"] - expected) <= 1e-12


def test_section_ranks_by_every_score_beside_accuracy(built):
    assert set(built.data["scores"]) == set(SCORES)
    tables = [b for b in built.blocks if isinstance(b, Table)]
    ranking_table, correlation_table = tables
    assert "rank by accuracy" in ranking_table.columns
    assert all(f"rank by {score}" in ranking_table.columns for score in SCORES)
    assert [row[0] for row in correlation_table.rows[: len(SCORES)]] == list(SCORES)
    assert any(isinstance(b, Figure) for b in built.blocks)
    for result in built.data["scores"].values():
        low, high = result["spearman"]["interval"]
        assert -1.0 <= low <= high <= 1.0


def test_section_shows_the_calibration_caveat_and_what_temperature_scaling_changes(built):
    nll = built.data["scores"]["nll"]
    shown = [b.text for b in built.blocks if isinstance(b, Paragraph) and b.kind == "warning"]
    # on chile, gradient boosting is the most confident model and the least accurate
    assert shown == nll["warnings"] and any("gradient_boosting" in text for text in shown)
    scaled = built.data["temperature_scaled"]
    assert scaled["n_items"] == nll["n_items"] - built.data["calibration_size"]
    assert all(row["temperature"] > 0 for row in scaled["models"])
    correlation_rows = [b for b in built.blocks if isinstance(b, Table)][1].rows
    assert correlation_rows[-1][0].startswith("nll, temperatures fitted on")
    # the row is measured on other rows than the rest of the table: it says on which
    assert correlation_rows[-1][0].endswith(f"ranked on the other {scaled['n_items']}")
    assert correlation_rows[-1][1] == scaled["spearman"]["value"]


def test_section_is_skipped_with_fewer_than_two_probability_models(context):
    one = dict(list(context.probabilities.items())[:1])
    ctx = AuditContext(**{**vars(context), "probabilities": one})
    assert section.build(ctx) is None
    assert section.build(AuditContext(**{**vars(context), "probabilities": {}})) is None


def test_section_goes_into_a_report(built, tmp_path):
    report = Report("ranking test", {})
    report.add(built)
    html_path, json_path = report.write(tmp_path)
    stored = json.loads(json_path.read_text())
    ids = [s["id"] for s in stored["sections"]]
    assert ids == ["ranking"] and "Ranking models without labels" in html_path.read_text()


def test_the_docs_chile_figures_are_the_sections(built):
    # docs/evaluation-ranking.md: the default zoo ranks chile with "the least accurate model first
    # without labels (rho = -0.5)", the other two in their order by accuracy (not "exactly
    # backwards", as the page said: reversed would be rho = -1), and "after temperature scaling on
    # 200 rows, rho = 1"
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "evaluation-ranking.md").read_text()
    text = " ".join(page.split())
    assert "ranks the least accurate model first without labels (rho = -0.5)" in text
    assert "the other two keep their order by accuracy" in text
    assert "exactly backwards" not in text
    nll = built.data["scores"]["nll"]
    predicted, true = nll["predicted_ranking"], nll["true_ranking"]
    assert predicted[0] == true[-1] == "gradient_boosting"
    assert list(predicted[1:]) == list(true[:-1])
    assert "after temperature scaling on 200 rows, rho = 1." in text
    assert built.data["scores"]["nll"]["spearman"]["value"] == -0.5
    assert built.data["calibration_size"] == 200
    assert built.data["temperature_scaled"]["spearman"]["value"] == 1.0


def test_summary_says_what_the_correlations_sign_means_not_that_they_agree(built):
    # "the models' order agrees with their order by accuracy with Spearman rho = -0.50" read
    # as agreement for a reversed order
    assert "agrees" not in built.summary
    assert built.summary.startswith(
        "Ranked without labels by mean NLL, the models' order against their order by accuracy: "
        "Spearman rho = "
    )
    assert built.summary.endswith("(+1: the same order, 0: unrelated, -1: reversed).")
