"""``run_audit(models=[...])`` trains only those default models (review 57): the plan, the
steps and the notes follow the models asked (one model: no ranking; logistic regression alone:
no FastPD, as for a ``--model`` logistic regression)."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError


def _table():
    rng = np.random.default_rng(43)
    n = 60
    x = rng.normal(size=(n, 3))
    y = (x[:, 1] + rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "y": y, "g": ["u", "v"] * 30})


def _audit(tmp_path, models, sections):
    plans, steps = [], []
    result = run_audit(
        _table(), label="y", group="g", out=tmp_path, models=models, sections=sections,
        plan=plans.append, progress=lambda what, done, total: steps.append((what, total)),
    )  # fmt: skip
    return result, plans[0], steps


def test_one_model_plans_no_ranking_and_notes_why(tmp_path):
    result, plan, steps = _audit(tmp_path, ["random_forest"], ["overview", "ranking"])
    assert (plan.models, plan.sections) == (["random_forest"], ["overview"])
    assert "ranking" not in plan.describe()
    assert steps[-1] == ("done", 5)  # data, one model, saving, overview, writing
    assert [s.id for s in result.report.sections] == ["overview"]
    assert any(n.startswith("No ranking section") for n in result.context.notes)
    assert list(result.model_paths) == ["random_forest"]


def test_logistic_regression_alone_leaves_fastpd_out_with_its_note(tmp_path):
    result, plan, _ = _audit(tmp_path, ["logistic_regression"], ["overview", "fastpd"])
    assert plan.sections == ["overview"]
    assert any("FastPD explains tree ensembles only" in n for n in result.context.notes)


@pytest.mark.parametrize(
    "models, sections, argument",
    [
        (["logistic_regression"], ["fastpd"], "sections"),
        (["random_forest"], ["ranking"], "sections"),
        ([], None, "models"),
        (["random_forest", "random_forest"], None, "models"),
    ],
)
def test_bad_model_lists_are_refused_before_anything_is_written(
    tmp_path, models, sections, argument
):
    with pytest.raises(InputError) as caught:
        run_audit(_table(), label="y", group="g", out=tmp_path, models=models, sections=sections)
    assert caught.value.argument == argument
    assert str(caught.value).startswith(f"{argument}: expected ")
    assert list(tmp_path.iterdir()) == []
