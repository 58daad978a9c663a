"""Training for smoothing: the Margin-CS and Gaussian losses against a NumPy transcription of
their formulas, NaN safety, reproducibility, model files, and Margin-CS against Gaussian
augmentation on digits."""

import numpy as np
import pytest
import torch
from scipy import special

from trustlab.errors import InputError
from trustlab.robustness import (
    SmoothedClassifier,
    certify_dataset,
    digits_model,
    load_base_model,
    load_digits_split,
    make_cost_matrix,
    save_base_model,
    train_smoothed,
)
from trustlab.robustness.training import gaussian_loss, margin_cs_loss

torch.set_num_threads(1)

LOSS_SETTINGS = dict(
    sigma=0.5, beta=16.0, lbd=3.0, lbd_sensitive=2.0, gamma_sensitive=16.0, gamma_normal=4.0
)


def numpy_margin_cs(logits, targets, costs, settings, pairwise):
    """The Margin-CS loss written out sample by sample from the module docstring."""
    logits = logits.astype(np.float64)
    probs = special.softmax(logits, axis=2).mean(axis=1)
    ce = -np.log(probs[np.arange(len(targets)), targets] + 1e-10).sum()
    soft = special.softmax(settings["beta"] * logits, axis=2).mean(axis=1)
    normal = sensitive = 0.0
    gamma_n, gamma_s = settings["gamma_normal"], settings["gamma_sensitive"]
    for i, y in enumerate(targets):
        harmful = np.flatnonzero(costs[y] > 0)
        p_true = soft[i, y]
        if harmful.size == 0:
            rho = special.ndtri(p_true) - special.ndtri(np.delete(soft[i], y).max())
            if np.isfinite(rho) and 0 < rho < gamma_n:
                normal += gamma_n - rho
        elif not pairwise:
            rho = special.ndtri(p_true) - special.ndtri(soft[i, harmful].max())
            if np.isfinite(rho) and abs(rho) < gamma_s:
                sensitive += gamma_s - rho
        else:
            for j in harmful:
                rho = special.ndtri(p_true) - special.ndtri(soft[i, j])
                if np.isfinite(rho) and abs(rho) < gamma_s:
                    sensitive += (gamma_s - rho) * costs[y, j] / costs.max()
    robust = (
        settings["sigma"] / 2 * (settings["lbd"] * normal + settings["lbd_sensitive"] * sensitive)
    )
    return (ce + robust) / len(targets), robust


def random_batch(seed, size=40, copies=8, classes=5, scale=1.5):
    rng = np.random.default_rng(seed)
    logits = (scale * rng.normal(size=(size, copies, classes))).astype(np.float32)
    logits[0] *= 60  # saturated softmax: infinite radii, left out
    targets = rng.integers(0, classes, size=size)
    return logits, targets


@pytest.mark.parametrize("pairwise", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_margin_cs_loss_equals_the_formula(pairwise, seed):
    logits, targets = random_batch(seed)
    costs = np.zeros((5, 5))
    costs[1, [2, 4]] = [1.0, 3.0]
    costs[3, 0] = 2.0
    settings = LOSS_SETTINGS | dict(pairwise=pairwise)
    loss, parts = margin_cs_loss(
        torch.as_tensor(logits), torch.as_tensor(targets), torch.as_tensor(costs > 0),
        torch.as_tensor(costs / costs.max(), dtype=torch.float32), settings,
    )  # fmt: skip
    expected, robust = numpy_margin_cs(logits, targets, costs, settings, pairwise)
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    assert parts[2] == pytest.approx(robust, rel=1e-5)
    assert robust > 0  # the hinge terms are active in this batch


def test_gaussian_loss_is_the_mean_cross_entropy_over_copies():
    logits, targets = random_batch(3)
    loss, _ = gaussian_loss(torch.as_tensor(logits), torch.as_tensor(targets))
    log_p = special.log_softmax(logits.astype(np.float64), axis=2)
    expected = -log_p[np.arange(len(targets)), :, targets].mean()
    assert float(loss) == pytest.approx(expected, rel=1e-5)


def test_margin_cs_gradients_stay_finite_at_saturated_probabilities():
    logits, targets = random_batch(4, scale=40.0)
    costs = make_cost_matrix(5, {1: [2, 4], 3: [0]})
    tensor = torch.as_tensor(logits, dtype=torch.float32).requires_grad_()
    for pairwise in (False, True):
        loss, _ = margin_cs_loss(
            tensor, torch.as_tensor(targets), torch.as_tensor(costs > 0),
            torch.as_tensor(costs, dtype=torch.float32), LOSS_SETTINGS | dict(pairwise=pairwise),
        )  # fmt: skip
        (grad,) = torch.autograd.grad(loss, tensor)
        assert torch.isfinite(grad).all()


def test_training_is_reproducible_under_a_seed():
    X, y = load_digits_split("train")
    costs = make_cost_matrix(10, {3: [8]})
    states = []
    for _ in range(2):
        model = digits_model("mlp", hidden=16, random_state=0)
        train_smoothed(model, X[:200], y[:200], costs, max_epochs=2, random_state=5)
        states.append(model.state_dict())
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])


def test_saved_model_loads_back_with_the_same_outputs(tmp_path):
    model = digits_model("cnn", hidden=16, random_state=3)
    folder = save_base_model(model, tmp_path / "model", method="gaussian")
    loaded = load_base_model(folder)
    x = torch.as_tensor(load_digits_split("test")[0][:5])
    assert torch.equal(model(x), loaded(x))
    info = loaded.trustlab_description
    assert info["arch"] == "cnn" and info["method"] == "gaussian"
    assert folder == tmp_path / "model" and (folder / "model.json").exists()
    # save takes what load gives: the description survives a second round trip
    again = load_base_model(save_base_model(loaded, tmp_path / "again", sigma=0.5))
    assert again.trustlab_description == {**info, "sigma": 0.5}
    assert torch.equal(model(x), again(x))


class Payload:
    def __reduce__(self):
        return (open, ("/tmp/trustlab-smoothing-payload-ran", "w"))


def test_model_file_with_code_is_refused_without_running_it(tmp_path):
    model = digits_model("mlp", hidden=8)
    folder = save_base_model(model, tmp_path)
    torch.save({"weight": Payload()}, folder / "model.pt")
    with pytest.raises(InputError, match="model"):
        load_base_model(folder)
    from pathlib import Path

    assert not Path("/tmp/trustlab-smoothing-payload-ran").exists()


def test_bad_training_input_is_refused():
    X, y = load_digits_split("train")
    with pytest.raises(InputError, match="method"):
        train_smoothed(digits_model(hidden=8), X[:10], y[:10], method="macer")
    with pytest.raises(InputError, match="model"):
        train_smoothed(lambda b: b, X[:10], y[:10])
    with pytest.raises(InputError, match="y"):
        train_smoothed(digits_model(hidden=8), X[:10], y[:9])
    with pytest.raises(InputError, match="cost_matrix"):
        train_smoothed(digits_model(hidden=8), X[:10], y[:10], np.ones((10, 10)))


# Fresh seeds: none of them was used to choose a setting (docs/robustness-smoothing.md, "How the
# settings were chosen": the learning rate was chosen on a validation split of the training
# digits with seeds 0-9; the earlier runs used seeds 0-7 on the test split).
TEST_SEEDS = range(100, 108)


def train_and_certify(X, y, X_test, y_test, method, seed, sigma, costs):
    model = digits_model("mlp", hidden=64, random_state=seed)
    train_smoothed(model, X, y, costs, method, sigma=sigma, max_epochs=15, learning_rate=0.1,
                   random_state=seed)  # fmt: skip
    smooth = SmoothedClassifier(model, sigma, 10, batch_size=5_000)
    threes = y_test == 3
    certified = certify_dataset(smooth, X_test[threes], y_test[threes], n0=100, n=5_000,
                                alpha=0.001, cost_matrix=costs, random_state=0)  # fmt: skip
    with torch.no_grad():
        clean = (model(torch.as_tensor(X_test)).argmax(1).numpy() == y_test).mean()
    return certified.certified_accuracy(sigma)[0], certified.radius.mean(), clean


def _claim_run(method: str, seed: int) -> tuple[float, float, float]:
    """One training method and seed of the claim below (a background job:
    tests/background_jobs.py): Rob_cs(sigma), mean certified radius, clean accuracy."""
    X, y = load_digits_split("train")
    X_test, y_test = load_digits_split("test")
    costs = make_cost_matrix(10, {3: [8]})
    return train_and_certify(X, y, X_test, y_test, method, seed, 0.25, costs)


BACKGROUND_JOBS = {
    f"smoothing-claim/{seed}/{method}": (_claim_run, {"method": method, "seed": seed})
    for seed in TEST_SEEDS
    for method in ("gaussian", "margin-cs")
}
_CLAIM_RUNS: dict[str, tuple[float, float, float]] = {}


def claim_runs(background, names) -> dict[str, tuple[float, float, float]]:
    """The named runs of ``BACKGROUND_JOBS``, each computed once a session (a worker's job is
    handed out once): test_smoothing_docs_figures54.py reads seed 100's Gaussian run too."""
    todo = {name: BACKGROUND_JOBS[name] for name in names if name not in _CLAIM_RUNS}
    _CLAIM_RUNS.update(background.results(todo))
    return {name: _CLAIM_RUNS[name] for name in names}


@pytest.mark.slow
def test_margin_cs_raises_certified_cs_accuracy_at_sigma_over_fresh_seeds(background):
    """Seed class 3, harmful target 8 ("reading 3 as 8"), sigma 0.25, 15 epochs at learning
    rate 0.1, an MLP with 64 hidden units; the 55 test threes certified with n = 5,000.

    Claim: Margin-CS certifies more test threes against being read as 8 at radius sigma
    (Rob_cs(sigma)) than Gaussian augmentation, at a clean-accuracy cost of a few points.
    Not claimed: a larger mean certified radius (measured, printed, documented: it ties).

    The margins come from the spread over the validation seeds 0-9 (39 validation threes, the
    same settings), fixed before these seeds were run: Rob_cs(sigma) gain mean +0.018, sd
    0.017, min 0.000; clean-accuracy cost mean 0.031, sd 0.007, max 0.040.
    """
    runs = claim_runs(background, BACKGROUND_JOBS)
    gains, radius_gains, costs_clean = [], [], []
    for seed in TEST_SEEDS:
        rob_g, radius_g, clean_g = runs[f"smoothing-claim/{seed}/gaussian"]
        rob_m, radius_m, clean_m = runs[f"smoothing-claim/{seed}/margin-cs"]
        gains.append(rob_m - rob_g)
        radius_gains.append(radius_m - radius_g)
        costs_clean.append(clean_g - clean_m)
        print(f"seed {seed}: Rob_cs(sigma) {rob_g:.3f} -> {rob_m:.3f}, mean radius "
              f"{radius_g:.3f} -> {radius_m:.3f}, clean {clean_g:.3f} -> {clean_m:.3f}")  # fmt: skip
    gains, costs_clean = np.array(gains), np.array(costs_clean)
    print(f"mean radius gain (not asserted): mean {np.mean(radius_gains):+.3f}")
    # Validation sd 0.017 per seed -> the mean of 8 seeds has sd 0.006; 0 is 3 sd below the
    # validation mean (measured on seeds 100-107: mean +0.070, min +0.036 in the first run;
    # +0.100 and +0.073 in the December 2026 rerun on another float path).
    assert gains.mean() > 0
    # Two test threes (2/55 = 0.036) below Gaussian on a seed is 3 sd below the validation mean.
    assert gains.min() >= -2 / 55 - 1e-12
    # A cost of 1 to 6 points: 3 sd either side of the validation mean (0.031 +- 0.007) with
    # room for the split (measured: median 0.019, max 0.024; rerun median 0.0215).
    assert 0.01 <= np.median(costs_clean) <= 0.06
