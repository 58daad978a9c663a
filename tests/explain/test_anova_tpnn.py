"""ANOVA-TPNN: the components are the unique functional ANOVA decomposition (checked with
interpret's purification), predictions are their sum, the torch training network and the numpy
inference agree, the hand-written gradients equal autograd's, inputs are validated."""

import doctest
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from interpret.utils import purify
from scipy.special import expit, softmax
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.metrics import r2_score
from sklearn.preprocessing import QuantileTransformer

import trustlab.explain.anova_tpnn.estimator
import trustlab.explain.anova_tpnn.stability
from trustlab.errors import BackendError, ConfigError, InputError
from trustlab.explain.anova_tpnn import ANOVATPNN, ComponentValues, component_stability
from trustlab.explain.anova_tpnn._components import TermGroup
from trustlab.explain.anova_tpnn._encoding import FeatureMap
from trustlab.explain.anova_tpnn._target import guess_task
from trustlab.explain.anova_tpnn._terms import screen_pairs
from trustlab.explain.anova_tpnn._torch import (
    TPNNNetwork,
    _SumToZeroNeuron,
    reference_neurons,
)

PURE = 1e-6  # the tolerance, relative to a component's range


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def discrete_regression(n=1200, seed=0):
    """Three features with few distinct values (so the grid of observed values is small), one of
    them skewed, and a target with main effects and an interaction."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.integers(0, 25, n),
            np.round(rng.gamma(2.0, 3.0, n)),
            rng.integers(0, 8, n),
        ]
    ).astype(float)
    y = np.sin(X[:, 0] / 4) + 0.1 * X[:, 1] + 0.2 * (X[:, 0] - 12) * (X[:, 2] - 3.5) / 10
    return pd.DataFrame(X, columns=["a", "b", "c"]), y + 0.1 * rng.normal(size=n)


def mixed_multiclass(n=900, seed=1):
    """Two numeric and one categorical feature, three classes."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "income": np.round(rng.lognormal(3, 0.5, n), 1),
            "colour": rng.choice(["red", "green", "blue", "grey"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )
    score = (frame["age"] - 50) / 20 + (frame["colour"] == "red") - (frame["colour"] == "blue")
    score = score + np.log(frame["income"]) - 3 + rng.normal(0, 0.5, n)
    y = np.where(score < -0.5, "low", np.where(score < 0.7, "mid", "high"))
    return frame, y


@pytest.fixture(scope="module")
def regression():
    X, y = discrete_regression()
    model = ANOVATPNN(max_epochs=25, random_state=0, n_jobs=1).fit(X, y)
    return model, X, y


@pytest.fixture(scope="module")
def multiclass():
    X, y = mixed_multiclass()
    model = ANOVATPNN(max_epochs=15, random_state=0, n_jobs=1).fit(X, y)
    return model, X, y


@pytest.fixture(scope="module")
def binary():
    X, y = mixed_multiclass(n=600, seed=2)
    y = np.where(y == "high", "yes", "no")
    model = ANOVATPNN(max_epochs=10, random_state=0, n_jobs=1).fit(X, y)
    return model, X, y


def grid_of_observed(X, columns):
    """Every combination of the observed values of ``columns`` (the other features fixed at the
    first row), with each value's count in the training data."""
    values, counts = zip(*(np.unique(X[c], return_counts=True) for c in columns), strict=True)
    mesh = np.meshgrid(*values, indexing="ij")
    grid = pd.DataFrame({c: np.repeat(X[c].iloc[0], mesh[0].size) for c in X.columns})
    for c, m in zip(columns, mesh, strict=True):
        grid[c] = m.ravel()
    return grid, [len(v) for v in values], counts


def value_range(values):
    return float(np.max(values) - np.min(values))


# ---------------------------------------------------------------------------------- identifiability


def test_main_effects_have_mean_zero_over_training_rows(regression, multiclass):
    for model, X, _ in (regression, multiclass):
        parts = model.components(X)
        for name in model.feature_names_:
            values = parts[name]
            assert np.all(np.abs(values.mean(axis=0)) <= PURE * value_range(values))


def test_pairs_have_weighted_mean_zero_in_each_variable(regression):
    model, X, _ = regression
    for a, b in [("a", "b"), ("a", "c"), ("b", "c")]:
        grid, shape, (count_a, count_b) = grid_of_observed(X, [a, b])
        values = model.components(grid)[(a, b)].reshape(shape)
        tolerance = PURE * value_range(values)
        assert np.abs(count_a @ values / count_a.sum()).max() <= tolerance  # over a, each b
        assert np.abs(values @ count_b / count_b.sum()).max() <= tolerance  # over b, each a


def test_purification_finds_no_impurity_in_pairs(regression):
    model, X, _ = regression
    for a, b in [("a", "b"), ("a", "c"), ("b", "c")]:
        grid, shape, counts = grid_of_observed(X, [a, b])
        values = model.components(grid)[(a, b)].reshape(shape)
        pure, impurities, intercept = purify(values, np.outer(*counts).astype(float))
        tolerance = PURE * value_range(values)
        assert abs(float(np.ravel(intercept)[0])) <= tolerance
        assert all(np.abs(impurity).max() <= tolerance for _, impurity in impurities)
        np.testing.assert_allclose(pure, values, rtol=0, atol=tolerance)


def test_purified_main_effects_of_the_sum_equal_ours(regression):
    model, X, _ = regression
    grid, shape, counts = grid_of_observed(X, ["a", "c"])
    parts = model.components(grid)
    g_a, g_c, g_ac = (parts[k].reshape(shape) for k in ("a", "c", ("a", "c")))
    pure, impurities, intercept = purify(g_a + g_c + g_ac, np.outer(*counts).astype(float))
    found = dict(impurities)
    tolerance = PURE * value_range(g_a + g_c + g_ac)
    np.testing.assert_allclose(found[(0,)], g_a[:, 0], rtol=0, atol=tolerance)
    np.testing.assert_allclose(found[(1,)], g_c[0, :], rtol=0, atol=tolerance)
    np.testing.assert_allclose(pure, g_ac, rtol=0, atol=tolerance)
    assert abs(float(np.ravel(intercept)[0])) <= tolerance


def test_categorical_interaction_sums_to_zero_in_each_variable_for_every_class(multiclass):
    model, X, _ = multiclass
    grid, shape, (count_age, count_colour) = grid_of_observed(X, ["age", "colour"])
    values = model.components(grid)[("age", "colour")].reshape(*shape, -1)
    tolerance = PURE * value_range(values)
    assert np.abs(np.einsum("i,ijk->jk", count_age, values) / count_age.sum()).max() <= tolerance
    assert np.abs(np.einsum("j,ijk->ik", count_colour, values) / count_colour.sum()).max() <= (
        tolerance
    )


def test_multiclass_components_sum_to_zero_over_classes(multiclass):
    model, X, _ = multiclass
    parts = model.components(X)
    assert parts.values.shape == (len(X), len(model.component_names_), 3)
    assert np.abs(parts.values.sum(axis=2)).max() <= 1e-12 * np.abs(parts.values).max()
    assert abs(float(np.sum(model.intercept_))) <= 1e-12


def test_order_three_component_sums_to_zero_in_each_variable():
    X, y = discrete_regression(n=600)
    X = X.assign(a=X["a"] % 6, b=np.minimum(X["b"], 7))
    model = ANOVATPNN(order=3, max_epochs=2, random_state=0, n_jobs=1).fit(X, y)
    assert model.component_names_[-1] == "a & b & c"
    grid, shape, counts = grid_of_observed(X, ["a", "b", "c"])
    values = model.components(grid)["a & b & c"].reshape(shape)
    tolerance = PURE * value_range(values)
    for axis, count in enumerate(counts):
        means = np.tensordot(values, count / count.sum(), axes=([axis], [0]))
        assert np.abs(means).max() <= tolerance


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 60),
    n_basis=st.integers(1, 4),
    scale=st.floats(0.05, 5.0),
)
def test_tensor_product_of_neurons_sums_to_zero_for_any_parameters(seed, n, n_basis, scale):
    """For any thresholds, temperatures and level weights: a numeric x categorical component,
    with constants from n rows, sums to zero over those rows' values of each variable."""
    rng = np.random.default_rng(seed)
    x_num = np.column_stack([rng.uniform(-1, 1, n), np.zeros(n)])
    x_cat = np.column_stack([np.zeros(n, np.int64), rng.integers(0, 3, n)])
    shape = (2, 1, n_basis)
    group = TermGroup(
        features=np.array([[0, 1]]),
        pattern=np.array([False, True]),
        threshold=rng.uniform(-1.5, 1.5, shape),
        log_temperature=np.log(scale) + rng.normal(0, 0.5, shape),
        level_weights=rng.normal(size=(2, 1, 3, n_basis)),
        beta=rng.normal(size=(1, n_basis, 2)),
    ).with_constants(x_num, x_cat)
    # every (numeric value, level) combination of the n rows
    rows_num = np.column_stack([np.repeat(x_num[:, 0], n), np.zeros(n * n)])
    rows_cat = np.column_stack([np.zeros(n * n, np.int64), np.tile(x_cat[:, 1], n)])
    values = group.values(rows_num, rows_cat)[:, 0, :].reshape(n, n, 2)
    scale_of = max(1.0, np.abs(values).max())
    assert np.abs(values.mean(axis=0)).max() <= 1e-9 * scale_of
    assert np.abs(values.mean(axis=1)).max() <= 1e-9 * scale_of


# ---------------------------------------------------------------------------------- predictions


def test_prediction_is_intercept_plus_sum_of_components(regression, multiclass, binary):
    for model, X, _ in (regression, multiclass, binary):
        parts = model.components(X)
        assert np.array_equal(model.decision_function(X), parts.intercept + parts.values.sum(1))
    model, X, _ = regression
    assert np.array_equal(model.predict(X), model.components(X).total())


def test_probabilities_are_the_softmax_of_the_summed_components(multiclass, binary):
    model, X, _ = multiclass
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, softmax(model.components(X).total(), axis=1), atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    model, X, _ = binary
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], expit(model.components(X).total()))
    assert set(model.predict(X)) <= {"no", "yes"}


def test_numpy_inference_equals_the_torch_network(regression, multiclass):
    for model, X, _ in (regression, multiclass):
        x_num, x_cat = model._transform(X)
        network = torch_copy(model)
        network.eval()
        with torch.no_grad():
            values = network(torch.as_tensor(x_num), torch.as_tensor(x_cat)).numpy()
            bias = network.bias().numpy()
        np.testing.assert_allclose(values, model._component_array(x_num, x_cat), atol=1e-12)
        np.testing.assert_allclose(bias, np.atleast_1d(model.intercept_), atol=1e-15)


def test_training_mode_centres_each_batch_like_full_data_centring_of_that_batch(multiclass):
    model, X, _ = multiclass
    x_num, x_cat = model._transform(X.iloc[:100])
    network = torch_copy(model)
    network.train()
    values = network(torch.as_tensor(x_num), torch.as_tensor(x_cat)).detach().numpy()
    on_batch = [g.with_constants(x_num, x_cat) for g in model._term_groups]
    expected = np.concatenate([g.values(x_num, x_cat) for g in on_batch], axis=1)
    np.testing.assert_allclose(values, expected[:, model._order], atol=1e-12)


def torch_copy(model):
    """A float64 TPNNNetwork holding the fitted model's parameters and constants."""
    groups = [(g.features, tuple(g.pattern)) for g in model._term_groups]
    n_outputs = model._term_groups[0].beta.shape[-1]
    network = TPNNNetwork(
        groups, model._order, max(1, model._features.n_levels), model.n_basis, n_outputs
    ).double()
    with torch.no_grad():
        for module, group in zip(network.groups, model._term_groups, strict=True):
            for name in ("threshold", "log_temperature", "level_weights", "beta"):
                getattr(module, name).copy_(torch.as_tensor(getattr(group, name)))
            module.mean_sigmoid.copy_(torch.as_tensor(group.mean_sigmoid))
            module.mean_level.copy_(torch.as_tensor(group.mean_level))
        network.intercept.copy_(torch.as_tensor(np.atleast_1d(model.intercept_)))
    return network


def test_hand_written_neuron_gradients_equal_autograd():
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(40, 3, dtype=torch.float64, generator=generator) * 2 - 1
    threshold = (torch.rand(3, 4, dtype=torch.float64, generator=generator) - 0.5).requires_grad_()
    log_t = (0.3 * torch.randn(3, 4, dtype=torch.float64, generator=generator)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda b, t: _SumToZeroNeuron.apply(x, b, t), (threshold, log_t)
    )
    weights = torch.randn(40, 3, 4, dtype=torch.float64, generator=generator)
    ours = torch.autograd.grad(
        (_SumToZeroNeuron.apply(x, threshold, log_t) * weights).sum(), (threshold, log_t)
    )
    plain = torch.autograd.grad(
        (reference_neurons(x, threshold, log_t) * weights).sum(), (threshold, log_t)
    )
    for a, b in zip(ours, plain, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_quantile_scaling_matches_scikit_learn():
    rng = np.random.default_rng(0)
    train = np.concatenate([rng.normal(size=500), np.full(80, 0.25), rng.integers(0, 4, 120)])
    new = np.concatenate([train[:50], [-10.0, 10.0, 0.25, train.min(), train.max()]])
    frame = pd.DataFrame({"x": train})
    for n_quantiles in (1000, 100):
        features = FeatureMap.fit(frame, [False], n_quantiles)
        reference = QuantileTransformer(
            n_quantiles=min(n_quantiles, len(train)), output_distribution="uniform"
        )
        reference.fit(train[:, None])
        ours = features.transform(pd.DataFrame({"x": new}))[0][:, 0]
        np.testing.assert_allclose(
            ours, 2 * reference.transform(new[:, None])[:, 0] - 1, atol=1e-12
        )


@pytest.mark.parametrize("n_quantiles", [1000, 37])
def test_quantile_scaling_matches_scikit_learn_on_blocks_of_ties(n_quantiles):
    """Rounded values (blocks of ties) over a skewed tail: the quantiles are taken at scikit-
    learn's probabilities (linspace(0, 1, n) * 100, not linspace(0, 100, n): they differ in the
    last bit, which moved a tied block's edge by one quantile, 0.2004 against 0.2044, review 55)."""
    rng = np.random.default_rng(99)
    for n in (500, 3000):
        train = np.concatenate([np.round(rng.normal(size=n // 2), 1), rng.exponential(size=n // 2)])
        features = FeatureMap.fit(pd.DataFrame({"x": train}), [False], n_quantiles)
        reference = QuantileTransformer(n_quantiles=min(n_quantiles, n), subsample=None)
        reference.fit(train[:, None])
        new = np.concatenate([train, rng.normal(size=200) * 3])
        ours = features.transform(pd.DataFrame({"x": new}))[0][:, 0]
        expected = 2 * reference.transform(new[:, None])[:, 0] - 1
        np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)


def test_importance_is_root_mean_square_of_each_component(regression, multiclass):
    for model, X, _ in (regression, multiclass):
        values = model.components(X).values
        expected = np.sqrt((values**2).reshape(len(X), values.shape[1], -1).mean(axis=(0, 2)))
        np.testing.assert_allclose(model.importance().importance, expected, rtol=1e-12)
        np.testing.assert_allclose(model.importance(X).importance, expected, rtol=1e-12)
    ranked = model.importance().ranked()
    assert [v for _, v in ranked] == sorted((v for _, v in ranked), reverse=True)


def test_unseen_level_contributes_zero(multiclass):
    model, X, _ = multiclass
    row = X.iloc[:1].assign(colour="purple")
    parts = model.components(row)
    assert np.all(parts["colour"] == 0) and np.all(parts[("age", "colour")] == 0)
    assert np.all(parts[("income", "colour")] == 0)


# ---------------------------------------------------------------------------------- structure


def test_auto_screen_ranks_the_true_pair_first():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(2000, 6))
    y = x[:, 0] + x[:, 1] ** 2 + 2 * x[:, 2] * x[:, 3] + 0.5 * x[:, 1] * x[:, 4]
    y = y + 0.1 * rng.normal(size=2000)
    cats = np.zeros_like(x, dtype=np.int64)
    assert screen_pairs(x, cats, [False] * 6, y[:, None], max_pairs=2) == [(1, 4), (2, 3)]
    model = ANOVATPNN(interactions="auto", max_interactions=1, max_epochs=1, n_jobs=1)
    model.fit(x, y)
    assert model.component_names_ == ["x0", "x1", "x2", "x3", "x4", "x5", "x2 & x3"]


def test_interactions_are_taken_by_name_index_or_component_name():
    X, y = discrete_regression(n=300)
    model = ANOVATPNN(interactions=[("c", "a"), "b & c"], max_epochs=1, n_jobs=1).fit(X, y)
    assert model.component_names_ == ["a", "b", "c", "a & c", "b & c"]
    model = ANOVATPNN(interactions=[(0, 1)], max_epochs=1, n_jobs=1).fit(X.to_numpy(), y)
    assert model.terms_ == [("x0",), ("x1",), ("x2",), ("x0", "x1")]
    assert not hasattr(model, "feature_names_in_") and model.n_features_in_ == 3
    assert ANOVATPNN(order=1, max_epochs=1, n_jobs=1).fit(X, y).component_names_ == list("abc")


def test_auto_task_tells_labels_from_numbers():
    assert guess_task(np.array(["a", "b", "a"])) == "classification"
    assert guess_task(np.array([True, False])) == "classification"
    assert guess_task(np.array([0.0, 1.0, 1.0])) == "classification"
    assert guess_task(np.arange(21) % 20) == "classification"
    assert guess_task(np.arange(25)) == "regression"  # e.g. a count or a score
    assert guess_task(np.array([0.5, 1.0, 2.0])) == "regression"


def test_same_seed_gives_the_same_model():
    X, y = discrete_regression(n=300)
    fits = [ANOVATPNN(max_epochs=3, random_state=s, n_jobs=1).fit(X, y) for s in (7, 7, 8)]
    assert np.array_equal(fits[0].predict(X), fits[1].predict(X))
    assert not np.array_equal(fits[0].predict(X), fits[2].predict(X))


def test_early_stopping_keeps_the_best_epoch_and_waits_patience_epochs():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(300, 2)), rng.normal(size=300)  # nothing to learn
    model = ANOVATPNN(patience=3, max_epochs=200, random_state=0, n_jobs=1).fit(X, y)
    history = model.history_
    losses = history["validation_loss"]
    assert len(losses) == history["n_epochs"] < 200
    # stopped because the last 3 epochs did not improve on the earlier best by 1e-4 (relative)
    assert min(losses[-3:]) >= min(losses[:-3]) * (1 - 1e-4)
    assert history["best_validation_loss"] == min(losses)
    assert history["best_epoch"] == 1 + int(np.argmin(losses))


def plateau_schedule(losses, patience, n_decays, rate, decay):
    """The learning rate of each epoch and the stopping epoch by the documented rule, replayed
    from the validation losses: a plateau is ``patience`` epochs without a 1e-4 relative
    improvement; the first ``n_decays`` cut the rate, the next one stops."""
    rates, best, waited, cuts = [], np.inf, 0, 0
    for epoch, loss in enumerate(losses):
        rates.append(rate)
        improved = not np.isfinite(best) or loss < best - 1e-4 * abs(best)
        best = min(best, loss)
        waited = 0 if improved else waited + 1
        if waited >= patience:
            if cuts == n_decays:
                return rates, epoch + 1
            cuts, waited, rate = cuts + 1, 0, rate * decay
    return rates, len(losses)


def test_plateaus_cut_the_learning_rate_then_stop():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(300, 2)), rng.normal(size=300)  # nothing to learn: plateaus
    settings = dict(patience=3, max_epochs=200, learning_rate=0.02, random_state=0, n_jobs=1)
    model = ANOVATPNN(lr_decay=0.5, n_decays=2, **settings).fit(X, y)
    history = model.history_
    rates, stop = plateau_schedule(history["validation_loss"], 3, 2, 0.02, 0.5)
    assert history["n_epochs"] == stop < 200
    np.testing.assert_allclose(history["learning_rate"], rates, rtol=1e-12)
    assert sorted(set(rates)) == pytest.approx([0.005, 0.01, 0.02])
    # without cuts the run is the same up to its first plateau, where it stops
    constant = ANOVATPNN(lr_decay=1.0, n_decays=2, **settings).fit(X, y).history_
    first = constant["n_epochs"]
    assert constant["learning_rate"] == [0.02] * first
    assert constant["validation_loss"] == history["validation_loss"][:first]
    assert first == plateau_schedule(history["validation_loss"], 3, 0, 0.02, 0.5)[1]
    no_cuts = ANOVATPNN(lr_decay=0.5, n_decays=0, **settings).fit(X, y).history_
    assert no_cuts["validation_loss"] == constant["validation_loss"]


def test_training_that_never_gives_a_finite_loss_fails_clearly(monkeypatch):
    import trustlab.explain.anova_tpnn._torch as backend

    monkeypatch.setattr(backend, "_validation_loss", lambda *args: float("nan"))
    X, y = discrete_regression(n=300)
    with pytest.raises(BackendError, match="diverged"):
        ANOVATPNN(max_epochs=5, n_jobs=1).fit(X, y)


def test_estimator_contract(regression):
    model, X, y = regression
    fresh = clone(model)
    assert fresh.get_params() == model.get_params()
    with pytest.raises(NotFittedError):
        fresh.predict(X)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    assert model.history_["n_epochs"] == len(model.history_["validation_loss"]) <= 25
    assert model.history_["best_epoch"] == 1 + int(np.argmin(model.history_["validation_loss"]))
    assert model.score(X, y) == pytest.approx(r2_score(y, model.predict(X)), abs=1e-12)
    assert is_classifier(ANOVATPNN(task="classification"))
    assert is_regressor(ANOVATPNN(task="regression"))
    shuffled = X[["c", "a", "b"]]  # columns are matched by name
    np.testing.assert_array_equal(model.predict(shuffled), model.predict(X))


def test_save_and_load_give_the_same_model(multiclass, tmp_path):
    model, X, _ = multiclass
    saved = model.save(tmp_path / "model")
    assert saved == tmp_path / "model"
    weights, meta = saved / "model.pt", saved / "model.json"
    assert all(isinstance(v, torch.Tensor) for v in torch.load(weights, weights_only=True).values())
    loaded = ANOVATPNN.load(saved)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.components(X).values, model.components(X).values)
    assert loaded.component_names_ == model.component_names_
    assert loaded.get_params() == model.get_params()
    assert list(loaded.classes_) == list(model.classes_)
    np.testing.assert_array_equal(loaded.importance().importance, model.importance().importance)
    meta.write_text(meta.read_text().replace("trustlab.ANOVATPNN", "something.else"))
    with pytest.raises(InputError, match="model"):
        ANOVATPNN.load(tmp_path / "model")
    with pytest.raises(InputError, match="model.pt"):
        ANOVATPNN.load(tmp_path)


def test_component_plots(regression, multiclass):
    model, _, _ = regression
    assert len(model.plot_component("a").lines) >= 1
    axes = model.plot_component(("a", "b"))
    assert axes.collections and axes.get_xlabel() == "a" and axes.get_ylabel() == "b"
    model, _, _ = multiclass
    assert len(model.plot_component("age").lines) == 1 + 3  # zero line + one per class
    assert len(model.plot_component("age", target="high").lines) == 2
    assert len(model.plot_component("colour").patches) == 4 * 3
    assert len(model.plot_component("age & colour").lines) == 4 + 1
    grid = model.component_grid(("income", "age"), n_points=30)
    assert grid.values.shape == (*map(len, grid.axes), 3)
    assert model.importance().plot().get_title()
    with pytest.raises(InputError, match="component"):
        model.plot_component("height")
    with pytest.raises(InputError, match="target"):
        model.plot_component("age", target="unknown")


def test_component_grid_evaluates_the_component_at_raw_values(regression):
    model, X, _ = regression
    grid = model.component_grid("b", n_points=40)
    rows = pd.DataFrame({"a": 0.0, "b": grid.axes[0].astype(float), "c": 0.0})
    np.testing.assert_allclose(grid.values, model.components(rows)["b"], atol=1e-12)
    assert grid.axes[0].min() == X["b"].min() and grid.axes[0].max() == X["b"].max()


def test_component_stability_compares_components_across_models():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(50, 2))

    class Fixed:
        def __init__(self, v):
            self.v = v

        def components(self, X):
            return ComponentValues(("p", "q"), (("p",), ("q",)), self.v, 0.0)

    same = component_stability([Fixed(values), Fixed(values)], None)
    np.testing.assert_allclose(same.mean_correlation, [1.0, 1.0])
    np.testing.assert_allclose(same.normalised_variance, [0.0, 0.0], atol=1e-15)
    flipped = component_stability([Fixed(values), Fixed(values * [1, -2])], None)
    np.testing.assert_allclose(flipped.mean_correlation, [1.0, -1.0])
    np.testing.assert_allclose(flipped.raw_variance[1], np.mean((1.5 * values[:, 1]) ** 2))
    np.testing.assert_allclose(flipped.normalised_variance[1], 1.0)
    assert flipped.to_dict()["components"]["q"]["mean_correlation"] == pytest.approx(-1.0)
    with pytest.raises(InputError, match="models"):
        component_stability([Fixed(values)], None)


def test_summary_saves_the_model_components_and_plots(multiclass, tmp_path):
    from trustlab._results import write_outputs

    model, X, y = multiclass
    summary = model.summarize(X, y, n_points=20, top=2)
    # the training score leaves out the rows held out for early stopping (it counted them)
    trained = np.ones(len(X), dtype=bool)
    trained[model.validation_rows_] = False
    assert 0 < len(model.validation_rows_) < len(X)
    expected = np.mean(model.predict(X)[trained] == np.asarray(y)[trained])
    assert summary.training_score == pytest.approx(expected, abs=1e-15)
    assert summary.to_dict()["training_score_rows"] == trained.sum()
    assert f"(on the {trained.sum()} rows it trained on)" in summary.summary()
    # rows other than the fit's: every one is scored
    other = model.summarize(X.iloc[:-1], np.asarray(y)[:-1], n_points=5, top=0)
    assert other.training_score == model.score(X.iloc[:-1], np.asarray(y)[:-1])
    assert other.to_dict()["training_score_rows"] == len(X) - 1
    assert "rows it trained on" not in other.summary()
    assert (summary.n_epochs, summary.best_epoch) == (
        model.history_["n_epochs"],
        model.history_["best_epoch"],
    )
    written = {p.name for p in write_outputs(summary, tmp_path)}
    assert written == {"result.json", *summary.to_dict()["files"]}
    assert len([n for n in written if n.startswith("component_")]) == 2
    loaded = ANOVATPNN.load(tmp_path)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert summary.to_dict()["classes"] == ["high", "low", "mid"]
    with pytest.raises(InputError, match="top: expected an integer >= 0"):
        model.summarize(X, y, top=-1)


def test_prediction_table_lays_out_predictions_probabilities_and_components(multiclass):
    model, X, _ = multiclass
    table = model.prediction_table(X.iloc[:20], components=True)
    np.testing.assert_array_equal(table["prediction"], model.predict(X.iloc[:20]))
    np.testing.assert_array_equal(table["probability_mid"], model.predict_proba(X.iloc[:20])[:, 2])
    values = model.components(X.iloc[:20]).values
    np.testing.assert_array_equal(table["age & colour [low]"], values[:, 4, 1])
    assert list(model.prediction_table(X.iloc[:3]).columns) == [
        "prediction",
        "probability_high",
        "probability_low",
        "probability_mid",
    ]


def test_component_figures_check_the_target_before_drawing(multiclass):
    model, _, _ = multiclass
    figures = model.component_figures(["age", ("age", "colour")], target="high")
    assert list(figures.files()) == ["component_age.png", "component_age__colour.png"]
    assert figures.to_dict()["components"] == ["age", "age & colour"]
    with pytest.raises(InputError, match="target"):
        model.component_figures(["age"], target="unknown")


# ---------------------------------------------------------------------------------- bad input


def test_nan_in_a_feature_is_refused():
    X, y = discrete_regression(n=300)
    X.loc[5, "b"] = np.nan
    with pytest.raises(InputError, match="feature 'b'"):
        ANOVATPNN(n_jobs=1).fit(X, y)
    frame, labels = mixed_multiclass(n=300)
    frame.loc[3, "colour"] = None
    with pytest.raises(InputError, match="missing values.*'colour'"):
        ANOVATPNN(n_jobs=1).fit(frame, labels)


def test_constant_feature_is_refused():
    X, y = discrete_regression(n=300)
    with pytest.raises(InputError, match="feature 'c' to vary"):
        ANOVATPNN(n_jobs=1).fit(X.assign(c=3.0), y)
    with pytest.raises(InputError, match="at least 2 values"):
        ANOVATPNN(n_jobs=1).fit(X.assign(c="same"), y)


def test_small_data_holds_nothing_out_and_follows_the_training_loss():
    """Below 61 rows (validation_fraction=0.15), or with a class of a single row, no rows are held
    out (these fits used to be refused): the plateaus and the kept checkpoint follow the loss on
    the training rows, which is what ``best_validation_loss`` then reports."""
    X, y = discrete_regression(n=40)
    model = ANOVATPNN(max_epochs=40, patience=3, random_state=0, n_jobs=1).fit(X, y)
    history = model.history_
    assert history["n_validation_rows"] == 0
    standardised_mse = np.mean(((y - model.predict(X)) / y.std()) ** 2)
    assert history["best_validation_loss"] == pytest.approx(standardised_mse, rel=1e-4)
    assert "training loss (no rows held out)" in model.summarize(X, y).summary()
    labels = np.array(["a"] * 99 + ["b"])
    single = ANOVATPNN(max_epochs=2, n_jobs=1).fit(discrete_regression(n=100)[0], labels)
    assert single.history_["n_validation_rows"] == 0
    assert list(single.classes_) == ["a", "b"]
    held_out = ANOVATPNN(max_epochs=2, n_jobs=1).fit(*discrete_regression(n=67))
    assert held_out.history_["n_validation_rows"] == 11  # ceil(0.15 * 67)
    with pytest.raises(InputError, match=r"X: found array with 1 sample\(s\)"):
        ANOVATPNN(n_jobs=1).fit(X.iloc[:1], y[:1])


def test_scikit_learn_facing_errors_are_input_errors_naming_the_argument(regression):
    """scikit-learn's checks look for fragments of its own messages (tests/test_estimator_checks.py);
    each refusal is still an InputError that names the argument."""
    from scipy import sparse

    X, y = discrete_regression(n=100)
    cases = [
        (sparse.csr_matrix(X.to_numpy()), y, "X", "sparse"),
        (X.to_numpy() + 1j, y, "X", "Complex data not supported"),
        (X.iloc[:0], y[:0], "X", r"0 sample\(s\)"),
        (X[[]], y, "X", r"0 feature\(s\) \(shape=\(100, 0\)\)"),
        (
            X.assign(a=np.where(np.arange(100) == 5, np.inf, X["a"])),
            y,
            "X",
            "got inf in feature 'a'",
        ),
        (
            X.assign(a=np.where(np.arange(100) == 5, np.nan, X["a"])),
            y,
            "X",
            "got NaN in feature 'a'",
        ),
        (X.to_numpy()[:, 0], y, "X", "Reshape your data"),
        (X, None, "y", "requires y to be passed, but the target y is None"),
    ]
    for data, target, argument, message in cases:
        with pytest.raises(InputError, match=message) as info:
            ANOVATPNN(max_epochs=1, n_jobs=1).fit(data, target)
        assert info.value.argument == argument
    model, X, _ = regression
    with pytest.raises(InputError, match="X has 2 features, but ANOVATPNN is expecting 3") as info:
        model.predict(X.to_numpy()[:, :2])
    assert info.value.argument == "X"
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        ANOVATPNN(max_epochs=1, n_jobs=1).fit(*discrete_regression(n=100)[:1], y[:, None])
    # regressors have neither decision_function nor predict_proba, as in scikit-learn
    assert not hasattr(ANOVATPNN(task="regression"), "predict_proba")
    assert not hasattr(ANOVATPNN(task="regression"), "decision_function")
    assert hasattr(ANOVATPNN(), "predict_proba") and hasattr(ANOVATPNN(), "decision_function")


def test_object_columns_with_unhashable_values_are_levels_by_their_text():
    X, y = discrete_regression(n=100)
    column = X["c"].to_numpy().astype(object)
    column[0] = {"kind": "odd"}
    table = X.assign(c=column)
    model = ANOVATPNN(max_epochs=2, random_state=0, n_jobs=1).fit(table, y)
    assert model.categorical_ == [False, False, True]
    assert "{'kind': 'odd'}" in model._features.levels[2]
    np.testing.assert_array_equal(model.predict(table.iloc[:3]), model.predict(table)[:3])


def test_unknown_interaction_names_are_refused():
    X, y = discrete_regression(n=300)
    for bad in ([("a", "height")], ["a & height"], [("a", 7)], "some", [("a", "a")]):
        with pytest.raises(InputError, match="interactions"):
            ANOVATPNN(interactions=bad, n_jobs=1).fit(X, y)
    with pytest.raises(InputError, match="each term once"):
        ANOVATPNN(interactions=[("a", "b"), ("b", "a")], n_jobs=1).fit(X, y)
    with pytest.raises(InputError, match="order=1"):
        ANOVATPNN(order=1, interactions=[("a", "b")], n_jobs=1).fit(X, y)


def test_other_bad_input_is_refused(regression):
    X, y = discrete_regression(n=300)
    cases = [
        (dict(order=0), "order"),
        (dict(validation_fraction=0.9), "validation_fraction"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(lr_decay=0.0), "lr_decay"),
        (dict(lr_decay=1.5), "lr_decay"),
        (dict(n_decays=-1), "n_decays"),
        (dict(task="ranking"), "task"),
        (dict(categorical_features=["height"]), "categorical_features"),
        (dict(n_jobs=0), "n_jobs"),
    ]
    for params, argument in cases:
        with pytest.raises(InputError, match=argument):
            ANOVATPNN(**{"n_jobs": 1, **params}).fit(X, y)
    with pytest.raises(InputError, match="y: expected one value per row"):
        ANOVATPNN(n_jobs=1).fit(X, y[:-1])
    with pytest.raises(InputError, match="at least 2 classes"):
        ANOVATPNN(task="classification", n_jobs=1).fit(X, np.zeros(300, int))
    with pytest.raises(InputError, match="numbers in the numeric feature 'a'"):
        ANOVATPNN(categorical_features=None, n_jobs=1).fit(X.assign(a="x"), y)
    model, X, _ = regression
    with pytest.raises(InputError, match="without 'c'"):
        model.predict(X[["a", "b"]])
    with pytest.raises(InputError, match="3 columns"):
        model.predict(X.to_numpy()[:, :2])
    with pytest.raises(InputError, match="predict_proba"):
        model.predict_proba(X)


# ---------------------------------------------------------------------------------- packaging


def test_importing_the_module_does_not_import_torch():
    code = (
        "import sys, trustlab.explain, trustlab.explain.anova_tpnn, trustlab.cli.explain_anova, "
        "trustlab.audit.sections.anova_tpnn; assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fitting_without_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    X, y = discrete_regression(n=300)
    with pytest.raises(ConfigError, match=r"trustlab\[torch\]"):
        ANOVATPNN(max_epochs=1).fit(X, y)


def test_docstring_examples_run():
    modules = [trustlab.explain.anova_tpnn.estimator, trustlab.explain.anova_tpnn.stability]
    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in modules]
    tried, failures = sum(r.attempted for r in results), sum(r.failed for r in results)
    assert tried >= 8 and failures == 0


def test_n_jobs_none_keeps_torchs_own_thread_setting_and_ints_set_it():
    import torch

    from trustlab.explain.anova_tpnn._torch import torch_threads

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        with torch_threads(None):
            assert torch.get_num_threads() == 1
        with torch_threads(2):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 1  # restored after each block
    finally:
        torch.set_num_threads(before)
    assert ANOVATPNN(n_jobs=None)._check_params() is None
    assert ANOVATPNN(n_jobs=-1)._check_params() == (os.cpu_count() or 1)


# ---------------------------------------------------------------------------------- review fixes


def test_a_level_read_as_a_number_in_one_file_and_as_text_in_another_is_the_same_level():
    """Trained on a text column ("1", "2", "x"), then given rows where a CSV reader saw only "1"
    and "2" and read them as integers: the levels are matched by their text, so the predictions
    are those of the same rows read as text (they were silently unseen levels, contributing 0)."""
    rng = np.random.default_rng(3)
    n = 300
    zone = rng.choice(["1", "2", "x"], n)
    X = pd.DataFrame({"a": rng.normal(size=n), "zone": zone})
    y = X["a"] + np.select([zone == "1", zone == "2"], [2.0, -1.0], 0.5) + rng.normal(0, 0.1, n)
    model = ANOVATPNN(max_epochs=10, random_state=0, n_jobs=1).fit(X, y)
    as_text = X[X["zone"] != "x"].iloc[:20]
    as_numbers = as_text.assign(zone=as_text["zone"].astype(int))
    assert as_numbers["zone"].dtype.kind == "i"
    parts = model.components(as_numbers)
    assert np.all(parts["zone"] != 0)
    np.testing.assert_array_equal(parts.values, model.components(as_text).values)
    np.testing.assert_array_equal(model.predict(as_numbers), model.predict(as_text))
    # and the other way: levels learnt as numbers, given as text
    numbers = X[X["zone"] != "x"].assign(zone=lambda f: f["zone"].astype(int))
    by_level = ANOVATPNN(max_epochs=5, random_state=0, n_jobs=1, categorical_features=["zone"]).fit(
        numbers, y[X["zone"] != "x"]
    )
    np.testing.assert_array_equal(
        by_level.predict(numbers.iloc[:20].astype({"zone": str})), by_level.predict(numbers[:20])
    )


def test_a_component_named_like_a_prediction_column_does_not_replace_it():
    """A feature called ``prediction`` (or ``probability_<class>``): its component is written
    as ``component:<name>`` and the prediction is kept; ordinary names are unchanged."""
    rng = np.random.default_rng(4)
    n = 200
    X = pd.DataFrame({"a": rng.normal(size=n), "prediction": rng.normal(size=n)})
    y = 3 * X["a"] + rng.normal(0, 0.1, n)
    model = ANOVATPNN(max_epochs=5, random_state=0, n_jobs=1).fit(X, y)
    table = model.prediction_table(X.iloc[:10], components=True)
    assert list(table.columns) == [
        "prediction",
        "a",
        "component:prediction",
        "a & prediction",
    ]
    np.testing.assert_array_equal(table["prediction"], model.predict(X.iloc[:10]))
    np.testing.assert_array_equal(
        table["component:prediction"], model.components(X.iloc[:10])["prediction"]
    )
    labels = np.where(X["a"] > 0, "yes", "no")
    binary = ANOVATPNN(max_epochs=3, random_state=0, n_jobs=1).fit(
        X.rename(columns={"prediction": "probability_yes"}), labels
    )
    rows = X.rename(columns={"prediction": "probability_yes"}).iloc[:10]
    table = binary.prediction_table(rows, components=True)
    assert len(set(table.columns)) == len(table.columns)
    np.testing.assert_array_equal(table["probability_yes"], binary.predict_proba(rows)[:, 1])
    assert "component:probability_yes" in table.columns
