"""ANOVA-TPNN class labels that cannot be ordered are refused naming y."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN


def test_labels_of_mixed_types_are_refused_naming_y():
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.array([1 if i % 2 else "a" for i in range(40)], dtype=object)
    with pytest.raises(InputError, match=r"^y: expected class labels of one type.*int, str"):
        ANOVATPNN(max_epochs=2).fit(X, y)


def test_an_unknown_target_class_is_named_with_the_classes_as_written():
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.integers(1, 4, 40)
    model = ANOVATPNN(max_epochs=2, random_state=0).fit(X, y)
    with pytest.raises(InputError) as caught:
        model.component_figures(["x0"], target=7)
    assert "one of the classes [1, 2, 3]" in str(caught.value)
    assert "np." not in str(caught.value)


def test_a_binary_or_regression_model_refuses_a_target_it_cannot_draw():
    """A binary model's components are the logit of its second class: --target naming the first
    class (or no class) drew that logit all the same, without a word."""
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    labels = np.where(X[:, 0] > 0, "yes", "no").astype(object)  # Python str labels
    binary = ANOVATPNN(max_epochs=2, random_state=0).fit(X, labels)
    assert binary.component_figures(["x0"], target="yes").target == "yes"
    assert binary.plot_component("x0").get_ylabel() == "component (logit of class yes)"
    for wrong in ("no", "maybe"):
        with pytest.raises(InputError, match=r"^target: expected no class or 'yes' for a binary"):
            binary.component_figures(["x0"], target=wrong)
    regression = ANOVATPNN(max_epochs=2, random_state=0).fit(X, X[:, 0] + 0.5 * X[:, 1])
    with pytest.raises(InputError, match=r"^target: expected no class for a regression model"):
        regression.plot_component("x0", target="yes")


def test_the_prediction_table_keeps_the_rows_of_a_dataframe():
    """A table of some rows of X had a fresh 0..n-1 index: joined back to X it misaligned."""
    pytest.importorskip("torch")
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    model = ANOVATPNN(max_epochs=2, random_state=0).fit(X, X["a"] - X["b"])
    some = X[X["a"] > 0]
    table = model.prediction_table(some, components=True)
    assert table.index.equals(some.index)
    np.testing.assert_array_equal(table["prediction"].to_numpy(), model.predict(some))
    assert not pd.concat([some, table], axis=1).isna().any().any()
