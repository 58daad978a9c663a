"""run_audit (review 53): test_size with a pred column or a model, and group_as_feature with a pred
column, are refused naming the argument, as the CLI refused --test-size and --group-as-feature
there; the library accepted them and silently ignored them (every row is audited, no model is
trained for a pred column)."""

import pandas as pd
import pytest
from sklearn.dummy import DummyClassifier

from trustlab.audit import run_audit
from trustlab.errors import InputError


def scored_table() -> pd.DataFrame:
    return pd.DataFrame(
        {"x": range(40), "y": ["a", "b"] * 20, "g": ["u"] * 20 + ["v"] * 20, "yhat": ["a"] * 40}
    )


def given(kind: str, table: pd.DataFrame) -> dict:
    if kind == "pred":
        return {"pred": "yhat"}
    return {"model": DummyClassifier().fit(table[["x"]], table["y"])}


@pytest.mark.parametrize(("kind", "words"), [("pred", "a pred column"), ("model", "a model")])
def test_test_size_with_pred_or_model_is_refused(tmp_path, kind, words):
    table = scored_table()
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        run_audit(table, label="y", group="g", test_size=0.3, out=out, **given(kind, table))
    assert str(caught.value) == (
        f"test_size: expected no held-out share with {words} (every row is audited), got 0.3"
    )
    assert caught.value.argument == "test_size"
    assert not out.exists()  # refused before any work


@pytest.mark.parametrize("value", [True, False])
def test_group_as_feature_with_pred_is_refused(tmp_path, value):
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        run_audit(
            scored_table(), label="y", group="g", pred="yhat", group_as_feature=value, out=out
        )
    assert str(caught.value) == (
        "group_as_feature: expected None with a pred column (no model is trained: 'yhat' is "
        f"audited as it is), got {value}"
    )
    assert caught.value.argument == "group_as_feature"
    assert not out.exists()


def test_without_them_the_given_predictions_and_model_are_audited(tmp_path):
    table = scored_table()
    for kind in ("pred", "model"):
        result = run_audit(
            table,
            label="y",
            group="g",
            out=tmp_path / kind,
            sections=["overview"],
            **given(kind, table),
        )
        assert result.context.n_test == 40  # every row audited
    # a model reads features, so group_as_feature is taken with it
    model = DummyClassifier().fit(table[["x", "g"]], table["y"])
    result = run_audit(
        table,
        label="y",
        group="g",
        model=model,
        group_as_feature=True,
        out=tmp_path / "m2",
        sections=["overview"],
    )
    assert [h["accuracy"] for h in result.headline().values()] == [0.5]


def test_group_as_feature_must_be_true_false_or_none(tmp_path):
    # 'no' was taken as None (neither True nor False): the group column's use silently unchanged
    table = scored_table()
    with pytest.raises(InputError) as caught:
        run_audit(table, label="y", group="g", group_as_feature="no", out=tmp_path / "o")
    assert str(caught.value) == "group_as_feature: expected True, False or None, got 'no'"
    assert not (tmp_path / "o").exists()
