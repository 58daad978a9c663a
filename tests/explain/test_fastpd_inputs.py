"""FastPD refuses bad input with errors that name the argument, what was expected and what came."""

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

import trustlab.explain.fastpd._engine as fastpd_engine
from trustlab.errors import InputError, ResourceError
from trustlab.explain import FastPD

RNG = np.random.default_rng(0)
X = RNG.normal(size=(200, 3))
Y = X[:, 0] * X[:, 1] + X[:, 2]
GBR = GradientBoostingRegressor(n_estimators=5, max_depth=2).fit(X, Y)


def test_feature_count_mismatch_is_refused():
    explainer = FastPD(GBR).fit(X[:20])
    with pytest.raises(InputError, match=r"X_eval: expected 3 feature columns.*shape \(5, 4\)"):
        explainer.shap_values(np.ones((5, 4)))
    with pytest.raises(InputError, match="background: expected 3 feature columns"):
        FastPD(GBR).fit(X[:20, :2])


def test_unsupported_model_error_lists_the_supported_ones():
    with pytest.raises(InputError) as info:
        FastPD(LinearRegression().fit(X, Y)).fit(X)
    message = str(info.value)
    assert message.startswith("model: expected a fitted tree model")
    for name in ("RandomForestRegressor", "HistGradientBoosting", "xgboost", "lightgbm"):
        assert name in message
    assert "LinearRegression" in message


def test_a_pipeline_is_explained_through_its_transform():
    pipe = make_pipeline(StandardScaler(), DecisionTreeRegressor(max_depth=3)).fit(X, Y)
    explainer = FastPD(pipe).fit(X[:100])
    direct = FastPD(pipe[-1]).fit(pipe[:-1].transform(X[:100]))
    np.testing.assert_array_equal(
        explainer.shap_values(X[100:110]), direct.shap_values(pipe[:-1].transform(X[100:110]))
    )
    phi = explainer.shap_values(X[100:110])
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, pipe.predict(X[100:110]), atol=1e-12
    )
    assert explainer.feature_names_ == ("x0", "x1", "x2")  # get_feature_names_out
    assert FastPD.supports(pipe)


def test_a_pipeline_with_one_hot_columns_names_the_transformed_features():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    frame = pd.DataFrame({"size": X[:, 0], "colour": np.where(X[:, 1] > 0, "red", "blue")})
    encode = ColumnTransformer(
        [("num", "passthrough", ["size"]), ("cat", OneHotEncoder(), ["colour"])]
    )
    pipe = make_pipeline(encode, GradientBoostingRegressor(n_estimators=5)).fit(frame, Y)
    explainer = FastPD(pipe).fit(frame)
    assert explainer.feature_names_ == ("num__size", "cat__colour_blue", "cat__colour_red")
    explanation = explainer.explain(frame.iloc[5:9])
    assert list(explanation.shap_table()["row"]) == [5, 6, 7, 8]  # the frame's index


def test_a_pipeline_not_ending_in_a_tree_model_is_refused():
    pipe = make_pipeline(StandardScaler(), LinearRegression()).fit(X, Y)
    assert not FastPD.supports(pipe)
    with pytest.raises(InputError, match="model: expected a fitted tree model.*LinearRegression"):
        FastPD(pipe).fit(X)


def test_a_transform_that_fails_is_one_clear_error():
    pipe = make_pipeline(StandardScaler(), DecisionTreeRegressor(max_depth=2)).fit(X, Y)
    explainer = FastPD(pipe).fit(X)
    with pytest.raises(InputError, match="X_eval: the pipeline's transform .* failed on it"):
        explainer.shap_values(np.ones((3, 5)))


def test_unfitted_model_is_refused():
    with pytest.raises(InputError, match="model: expected a fitted model"):
        FastPD(RandomForestRegressor()).fit(X)
    with pytest.raises(InputError, match="model: expected a fitted model"):
        FastPD(xgb.XGBRegressor()).fit(X)
    with pytest.raises(InputError, match="model: expected a fitted model"):
        FastPD(lgb.LGBMRegressor()).fit(X)


def test_empty_background_is_refused():
    with pytest.raises(InputError, match="background: expected at least 1 element"):
        FastPD(GBR).fit(np.empty((0, 3)))


def test_nan_is_refused_where_the_model_does_not_accept_it():
    holes = X[:20].copy()
    holes[3, 1] = np.nan
    with pytest.raises(InputError, match=r"background: expected no missing values.*\(3, 1\)"):
        FastPD(GBR).fit(holes)
    with pytest.raises(InputError, match=r"X_eval: expected no missing values"):
        FastPD(GBR).fit(X[:20]).pd_function(holes, [0])


def test_nan_is_accepted_where_the_model_routes_it():
    holes = X[:20].copy()
    holes[3, 1] = np.nan
    model = HistGradientBoostingRegressor(max_iter=3).fit(X, Y)
    assert np.isfinite(FastPD(model).fit(holes).shap_values(holes)).all()


def test_infinity_is_refused_everywhere():
    model = HistGradientBoostingRegressor(max_iter=3).fit(X, Y)
    bad = X[:5].copy()
    bad[2, 0] = np.inf
    with pytest.raises(
        InputError, match=r"X_eval: expected finite values, got inf at index \(2, 0\)"
    ):
        FastPD(model).fit(X[:20]).shap_values(bad)


def test_bad_feature_subsets_are_refused():
    explainer = FastPD(GBR).fit(X[:20])
    with pytest.raises(InputError, match=r"subset: expected feature indices in \[0, 3\), got 3"):
        explainer.pd_function(X[:2], [3])
    with pytest.raises(InputError, match="subset: expected feature names among: x0, x1, x2"):
        explainer.pd_function(X[:2], ["age"])
    with pytest.raises(InputError, match="subset: expected distinct features"):
        explainer.pd_function(X[:2], [1, 1])
    with pytest.raises(InputError, match="features: expected one or two features"):
        explainer.pd_grid([0, 1, 2])
    with pytest.raises(InputError, match="grid: expected finite values"):
        explainer.pd_grid(0, [0.0, np.nan])
    # neither a feature nor a sequence of them (a raw TypeError before)
    for subset in (None, 1.0):
        with pytest.raises(InputError, match="subset: expected a feature name or index"):
            explainer.pd_function(X[:2], subset)


def test_a_string_of_feature_names_is_refused_not_split_into_letters():
    with pytest.raises(InputError, match="feature_names: expected a sequence of 3 distinct names"):
        FastPD(GBR, feature_names="abc").fit(X[:20])
    assert FastPD(GBR, feature_names=("a", "b", "c")).fit(X[:20]).feature_names_ == ("a", "b", "c")


def test_feature_names_never_move_the_columns_of_a_model_that_knows_its_names():
    """feature_names in another order than the model's feature_names_in_ picked the DataFrame's
    columns by them, so the SHAP values went to the wrong features and no longer added up to
    model.predict; names that are labels only were refused as missing columns."""
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = GradientBoostingRegressor(n_estimators=20, max_depth=2, random_state=0)
    model.fit(frame, Y)
    shuffled = frame[["c", "a", "b"]]  # a DataFrame is matched by name, whatever its order
    with pytest.raises(InputError, match=r"^feature_names: expected the model's feature names"):
        FastPD(model, feature_names=["b", "a", "c"]).fit(frame)
    for names in (None, ["a", "b", "c"], ["A", "B", "C"], ["a", "B", "C"]):
        explainer = FastPD(model, feature_names=names).fit(shuffled)
        phi = explainer.shap_values(shuffled.iloc[:5])
        np.testing.assert_allclose(
            phi.sum(axis=1) + explainer.expected_value_, model.predict(frame.iloc[:5]), atol=1e-9
        )
        assert explainer.feature_names_ == tuple(names or ("a", "b", "c"))
        assert np.argmax(np.abs(phi).mean(axis=0)) == 2  # c (Y = ab + c) under its own name


@pytest.mark.parametrize("percentiles", [(5, 95), (0.9, 0.1), (0.5,), "ab", (0.0, np.nan)])
def test_bad_percentiles_are_refused(percentiles):
    """Percent-style (5, 95) ended in numpy's 'Quantiles must be in the range [0, 1]'; a
    reversed pair was taken silently."""
    explainer = FastPD(GBR).fit(X[:40])
    with pytest.raises(InputError, match="percentiles: expected two fractions 0 <= low < high"):
        explainer.pd_grid(0, percentiles=percentiles, grid_resolution=5)
    assert len(explainer.pd_grid(0, percentiles=(0.1, 0.9), grid_resolution=5).grid[0]) == 5


def test_bad_max_order_is_refused():
    with pytest.raises(InputError, match="max_order: expected an integer >= 1, got 0"):
        FastPD(GBR, max_order=0).fit(X[:20])
    with pytest.raises(InputError, match="max_order: expected an integer >= 1, got 1.5"):
        FastPD(GBR).fit(X[:20]).decompose(X[:2], max_order=1.5)


def test_data_frame_without_the_model_columns_is_refused():
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = DecisionTreeRegressor(max_depth=2).fit(frame, Y)
    explainer = FastPD(model).fit(frame[:20])
    with pytest.raises(InputError, match=r"X_eval: expected the feature columns \['a', 'b', 'c'\]"):
        explainer.shap_values(frame.rename(columns={"c": "z"}))


def test_component_above_the_computed_order_is_refused():
    decomposition = FastPD(GBR).fit(X[:20]).decompose(X[:3], max_order=1)
    with pytest.raises(InputError, match="features: expected at most max_order=1 features"):
        decomposition.component(0, 1)


def test_gradient_boosting_with_a_model_as_init_is_refused():
    model = GradientBoostingRegressor(n_estimators=3, init=LinearRegression()).fit(X, Y)
    with pytest.raises(InputError, match="gradient boosting whose init is a constant"):
        FastPD(model).fit(X[:20])
    constant = GradientBoostingRegressor(n_estimators=3, init=DummyRegressor()).fit(X, Y)
    assert FastPD(constant).fit(X[:20]).decompose(X[:3]).complete


def test_multi_output_classifier_is_refused():
    model = RandomForestClassifier(3, max_depth=2).fit(X, np.column_stack([Y > 0, Y > 1]))
    with pytest.raises(InputError, match="model: expected a single-output classifier"):
        FastPD(model).fit(X[:20])


def test_categorical_splits_and_linear_boosters_are_refused():
    frame = pd.DataFrame({"a": X[:, 0], "c": pd.Categorical(RNG.integers(0, 3, 200))})
    model = xgb.XGBRegressor(n_estimators=3, enable_categorical=True, tree_method="hist")
    with pytest.raises(InputError, match="without categorical splits"):
        FastPD(model.fit(frame, Y)).fit(frame)
    linear = xgb.XGBRegressor(n_estimators=3, booster="gblinear").fit(X, Y)
    with pytest.raises(InputError, match="a tree booster"):
        FastPD(linear).fit(X)
    lgbm = lgb.LGBMRegressor(n_estimators=3, verbose=-1, min_child_samples=5)
    with pytest.raises(InputError, match="LightGBM model without categorical splits"):
        FastPD(lgbm.fit(frame, Y)).fit(frame)


def test_too_large_tables_raise_a_resource_error_naming_the_path_width(monkeypatch):
    monkeypatch.setattr(fastpd_engine, "TABLE_BUDGET_BYTES", 100)
    explainer = FastPD(GBR).fit(X[:20])
    with pytest.raises(ResourceError, match=r"widest path here uses 2 features.*max_depth"):
        explainer.shap_values(X[:3])
    assert explainer.pd_function(X[:3], [0]).shape == (3,)  # PD functions need no tables


def test_too_large_results_raise_a_resource_error_suggesting_max_order(monkeypatch):
    monkeypatch.setattr(fastpd_engine, "RESULT_BUDGET_BYTES", 64)
    with pytest.raises(ResourceError, match="max_order"):
        FastPD(GBR).fit(X[:20]).decompose(X[:50])


def test_parameters_are_stored_unchanged_and_checked_by_fit():
    explainer = FastPD(GBR, max_order=0, n_jobs=0, feature_names=["a"])
    assert (explainer.max_order, explainer.n_jobs, explainer.feature_names) == (0, 0, ["a"])
    with pytest.raises(InputError, match="n_jobs: expected None or a non-zero integer"):
        FastPD(GBR, n_jobs=0).fit(X[:20])
    with pytest.raises(InputError, match="feature_names: expected 3 distinct names"):
        FastPD(GBR, feature_names=["a"]).fit(X[:20])


def test_an_unfitted_explainer_is_refused():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match=r"fit\(background\)"):
        FastPD(GBR).shap_values(X[:2])
    with pytest.raises(NotFittedError):
        FastPD(GBR).expected_value_  # noqa: B018


def test_supports_tells_which_models_can_be_explained():
    assert FastPD.supports(GBR)
    assert FastPD.supports(lgb.LGBMRegressor(n_estimators=2, verbose=-1).fit(X, Y))
    assert not FastPD.supports(LinearRegression().fit(X, Y))
    assert not FastPD.supports(RandomForestRegressor())  # not fitted
    assert FastPD.supports(make_pipeline(StandardScaler(), DecisionTreeRegressor()).fit(X, Y))
    assert not FastPD.supports(make_pipeline(StandardScaler(), LinearRegression()).fit(X, Y))
