"""Review 5: a pandas ``category`` column given to ``plan_table``/``explain_table``.

A category of numbers was refused (``got "non-numeric ['k']"``) though the CLI explains the same
column read from a Parquet file; it is now its numbers. A category of text (or any text column)
is refused naming the column, its dtype and what to do."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier

from trustlab.errors import InputError
from trustlab.explain.fastpd import explain_table, plan_table


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=80), "k": rng.integers(0, 3, 80)})
    table["label"] = (table.a + table.k > 1).astype(int)
    model = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0)
    return model.fit(table[["a", "k"]], table.label), table


def test_a_category_of_numbers_is_explained_as_its_numbers(fitted):
    model, table = fitted
    as_category = table.assign(k=table.k.astype("category"))
    got = explain_table(model, as_category, label="label", random_state=0)
    want = explain_table(model, table, label="label", random_state=0)
    np.testing.assert_array_equal(got.shap_values, want.shap_values)


def test_a_category_of_numbers_with_a_missing_value_is_missing():
    from sklearn.ensemble import HistGradientBoostingRegressor

    table = pd.DataFrame({"k": [0.0, 1.0, 2.0, np.nan] * 10, "y": np.arange(40.0)})
    model = HistGradientBoostingRegressor(max_iter=3).fit(table[["k"]], table.y)
    plan = plan_table(model, table.assign(k=table.k.astype("category")), label="y")
    np.testing.assert_array_equal(plan.values, table[["k"]].to_numpy())


@pytest.mark.parametrize("kind", ["category", "object"])
def test_a_text_column_is_refused_naming_it_and_what_to_do(fitted, kind):
    model, table = fitted
    texts = table.assign(k=table.k.map({0: "low", 1: "mid", 2: "high"}).astype(kind))
    with pytest.raises(InputError) as info:
        plan_table(model, texts, label="label")
    message = str(info.value)
    assert message.startswith("data: expected numeric feature columns")
    assert f"'k' ({kind})" in message and "Pipeline" in message
    assert info.value.argument == "data"
