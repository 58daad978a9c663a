"""certify_dataset: an independent per-point loop as oracle, parallel runs, the resumable
checkpoint, the certified-accuracy curves and the result's JSON, summary and plot."""

import json

import matplotlib
import numpy as np
import pytest
import torch
from interval_oracle import IntervalClassifier
from scipy import optimize, special, stats

from trustlab.errors import InputError
from trustlab.robustness import SmoothedClassifier, certify_dataset, make_cost_matrix
from trustlab.robustness.bounds import accuracy_deficit

matplotlib.use("Agg")

SPEC = IntervalClassifier([0.0, 1.0, 1.5], direction=[2.0, 1.0])
COSTS = make_cost_matrix(4, {1: [2, 3], 2: [0], 3: [1]})
S0 = np.linspace(-0.6, 2.1, 12)
X = SPEC.point(S0)
Y = np.array([0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3])
SETTINGS = dict(n0=50, n=2_000, alpha=0.01, cost_matrix=COSTS, random_state=21)


class CountingModel:
    """The interval classifier, counting its calls; optionally interrupted after some."""

    def __init__(self, interrupt_after=None):
        self.calls = 0
        self.interrupt_after = interrupt_after

    def __call__(self, batch):
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        return SPEC(batch)


def per_point_loop(sigma=0.5, n0=50, n=2_000, alpha=0.01, seed=21):
    """An independent per-sample loop (like the authors'): each point's noise from its own
    stream, drawn in small batches; then the spec's bounds with SciPy."""
    out = []
    for i, (x, label) in enumerate(zip(X, Y, strict=True)):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(i,))))

        def draw(num, rng=rng, x=x):
            counts = np.zeros(4, dtype=int)
            for start in range(0, num, 300):
                size = min(300, num - start)
                noise = rng.standard_normal((size, 2), dtype=np.float32) * np.float32(sigma)
                for label_ in SPEC(x + noise):
                    counts[label_] += 1
            return counts

        top = int(np.argmax(draw(n0)))
        counts = draw(n)
        harmful = np.flatnonzero(COSTS[label] > 0)
        p_low = stats.beta.ppf(alpha / 2, counts[top], n - counts[top] + 1)
        p_up = [stats.beta.ppf(1 - alpha / (2 * len(harmful)), counts[j] + 1, n - counts[j])
                if counts[j] < n else 1.0 for j in harmful]  # fmt: skip
        if len(harmful) == 0:
            radius = np.inf
        elif top in harmful:
            radius = -np.inf
        else:
            capped = np.minimum(p_up, 1 - p_low)
            radius = sigma / 2 * (special.ndtri(p_low) - special.ndtri(capped.max()))
        out.append((top, counts, radius))
    return out


def test_dataset_certificates_equal_an_independent_per_point_loop():
    smooth = SmoothedClassifier(SPEC, 0.5, 4, batch_size=777)
    result = certify_dataset(smooth, X, Y, **SETTINGS)
    for i, (top, counts, radius) in enumerate(per_point_loop()):
        assert result.top_classes[i] == top
        assert np.array_equal(result.counts[i], counts)
        assert result.raw["radius"][i] == pytest.approx(radius, abs=1e-12)


@pytest.mark.parametrize("options", [dict(n_jobs=2, points_per_task=3), dict(points_per_task=1)])
def test_parallel_and_chunked_runs_give_the_same_result(options):
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    reference = certify_dataset(smooth, X, Y, **SETTINGS)
    result = certify_dataset(smooth, X, Y, **SETTINGS, **options)
    assert np.array_equal(result.counts, reference.counts)
    assert np.array_equal(result.top_classes, reference.top_classes)


def test_dask_cluster_gives_the_same_result():
    from dask.distributed import LocalCluster

    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    reference = certify_dataset(smooth, X, Y, **SETTINGS)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        result = certify_dataset(
            smooth, X, Y, **SETTINGS, dask_scheduler=cluster.scheduler_address, points_per_task=4
        )
    assert np.array_equal(result.counts, reference.counts)


def test_interrupted_run_resumes_from_the_checkpoint_with_identical_results(tmp_path):
    path = tmp_path / "run.jsonl"
    reference = certify_dataset(SmoothedClassifier(SPEC, 0.5, 4, batch_size=500), X, Y, **SETTINGS)
    flaky = CountingModel(interrupt_after=12)
    with pytest.raises(KeyboardInterrupt):
        certify_dataset(
            SmoothedClassifier(flaky, 0.5, 4, batch_size=500), X, Y, **SETTINGS,
            checkpoint=path, model_id="interval", points_per_task=2,
        )  # fmt: skip
    saved = len(path.read_text().splitlines()) - 1
    assert 0 < saved < len(X)
    model = CountingModel()
    resumed = certify_dataset(
        SmoothedClassifier(model, 0.5, 4, batch_size=500), X, Y, **SETTINGS, checkpoint=path,
        model_id="interval", points_per_task=2,
    )  # fmt: skip
    assert np.array_equal(resumed.counts, reference.counts)
    assert np.array_equal(resumed.raw["radius"], reference.raw["radius"])
    # Only the missing points were sampled.
    full = CountingModel()
    certify_dataset(SmoothedClassifier(full, 0.5, 4, batch_size=500), X, Y, **SETTINGS,
                    points_per_task=2)  # fmt: skip
    assert model.calls == full.calls * (len(X) - saved) // len(X)


def test_torn_last_line_is_dropped_and_redone(tmp_path):
    path = tmp_path / "run.jsonl"
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    reference = certify_dataset(
        smooth, X, Y, **SETTINGS, checkpoint=path, model_id="interval", points_per_task=5
    )
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    resumed = certify_dataset(smooth, X, Y, **SETTINGS, checkpoint=path, model_id="interval")
    assert np.array_equal(resumed.counts, reference.counts)
    assert len(path.read_text().splitlines()) == len(X) + 1


def test_finished_checkpoint_recertifies_at_another_alpha_without_sampling(tmp_path):
    path = tmp_path / "run.jsonl"
    certify_dataset(
        SmoothedClassifier(SPEC, 0.5, 4), X, Y, **SETTINGS, checkpoint=path, model_id="interval"
    )
    model = CountingModel()
    again = certify_dataset(
        SmoothedClassifier(model, 0.5, 4), X, Y, **(SETTINGS | dict(alpha=0.001, random_state=None)),
        checkpoint=path, model_id="interval",
    )  # fmt: skip
    direct = certify_dataset(
        SmoothedClassifier(SPEC, 0.5, 4), X, Y, **(SETTINGS | dict(alpha=0.001))
    )
    assert model.calls == 0  # the seed stored in the file was reused, nothing was resampled
    assert np.array_equal(again.raw["radius"], direct.raw["radius"])


@pytest.mark.parametrize("change", [dict(n=3_000), dict(random_state=22), dict(sigma=0.4)])
def test_checkpoint_of_another_run_is_refused(tmp_path, change):
    path = tmp_path / "run.jsonl"
    certify_dataset(
        SmoothedClassifier(SPEC, 0.5, 4), X[:3], Y[:3], **SETTINGS, checkpoint=path,
        model_id="interval",
    )  # fmt: skip
    sigma = change.pop("sigma", 0.5)
    with pytest.raises(InputError, match="checkpoint: expected a checkpoint of this run"):
        certify_dataset(
            SmoothedClassifier(SPEC, sigma, 4), X[:3], Y[:3], **(SETTINGS | change),
            checkpoint=path, model_id="interval",
        )  # fmt: skip


def test_a_checkpoint_with_a_model_that_is_not_a_torch_module_needs_a_model_id(tmp_path):
    """A callable cannot be fingerprinted: resuming with another one mixed two models' counts
    (the header held no model), though another model was documented as refused."""
    path = tmp_path / "run.jsonl"
    a = SmoothedClassifier(lambda b: (b[:, 0] > 0).astype(int), 0.5, 2)
    b = SmoothedClassifier(lambda b: (b[:, 0] <= 0).astype(int), 0.5, 2)
    y = (X[:4, 0] > 0).astype(int)
    with pytest.raises(InputError, match="^model_id: expected a name for the base model"):
        certify_dataset(a, X[:4], y, n=200, random_state=0, checkpoint=path)
    assert not path.exists()
    certify_dataset(a, X[:4], y, n=200, random_state=0, checkpoint=path, model_id="a")
    path.write_text("\n".join(path.read_text().splitlines()[:2]) + "\n")  # interrupted
    with pytest.raises(InputError, match="^model_id: expected a name"):
        certify_dataset(b, X[:4], y, n=200, random_state=0, checkpoint=path)
    with pytest.raises(
        InputError, match=r"checkpoint: expected a checkpoint of this run.*model_id"
    ):
        certify_dataset(b, X[:4], y, n=200, random_state=0, checkpoint=path, model_id="b")
    with pytest.raises(InputError, match="^model_id: expected a non-empty string"):
        certify_dataset(b, X[:4], y, n=200, random_state=0, checkpoint=path, model_id=" ")


def test_a_torch_checkpoint_refuses_another_torch_model(tmp_path):
    path = tmp_path / "run.jsonl"
    torch.manual_seed(0)
    first, second = torch.nn.Linear(2, 4), torch.nn.Linear(2, 4)
    points = X[:3, :2].astype(np.float32)
    certify_dataset(SmoothedClassifier(first, 0.5, 4), points, Y[:3], n=100, checkpoint=path)
    with pytest.raises(InputError, match=r"other settings \(the model\)"):
        certify_dataset(SmoothedClassifier(second, 0.5, 4), points, Y[:3], n=100, checkpoint=path)


def test_certified_accuracy_and_worst_cost_match_the_pointwise_certificates():
    result = certify_dataset(SmoothedClassifier(SPEC, 0.5, 4), X, Y, **SETTINGS)
    radii = np.linspace(0, 1.2, 13)
    certificates = [result.certificate(i) for i in range(len(result))]
    seeds = [c for c in certificates if c.harmful]
    for k, eps in enumerate(radii):
        cs = np.mean([c.cs_robust_at(eps) for c in seeds])
        std = np.mean([c.std_robust_at(eps) and c.top_class == c.label for c in certificates])
        cost = np.mean([c.worst_cost_at(eps) for c in certificates])
        assert result.certified_accuracy(radii, "cs")[k] == pytest.approx(cs)
        assert result.certified_accuracy(radii, "std")[k] == pytest.approx(std)
        assert result.worst_cost(radii)[k] == pytest.approx(cost)
    assert result.accuracy == np.mean(result.top_classes == Y)


@pytest.mark.parametrize("alpha, num_points, confidence", [(1e-3, 500, 0.99), (0.01, 100, 0.9)])
def test_high_probability_deficit_solves_the_bernstein_tail(alpha, num_points, confidence):
    variance, log_term = alpha * (1 - alpha), np.log(1 / (1 - confidence))

    def tail(t):
        return num_points * t**2 / (2 * (variance + t / 3)) - log_term

    t = optimize.brentq(tail, 1e-12, 1.0)
    assert accuracy_deficit(alpha, num_points, confidence) == pytest.approx(alpha + t, rel=1e-9)


def test_result_is_json_safe_and_shows_itself():
    result = certify_dataset(SmoothedClassifier(SPEC, 0.5, 4), X, Y, **SETTINGS)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["num_points"] == 12 and len(data["points"]) == 12
    assert data["curves"]["certified_accuracy_cs"][0] == pytest.approx(
        float(result.certified_accuracy(0.0, "cs")[0])
    )
    assert "Rob_cs" in result.summary()
    ax = result.plot()
    assert len(ax.get_lines()) == 2
    bound = result.certified_accuracy([0.0, 0.3], confidence=0.95)
    assert np.all(bound <= result.certified_accuracy([0.0, 0.3]))


def test_bad_dataset_input_is_refused():
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    with pytest.raises(InputError, match="y: expected 12 class indices"):
        certify_dataset(smooth, X, Y[:5])
    with pytest.raises(InputError, match="n0"):
        certify_dataset(smooth, X, Y, n0=500, n=100)
    with pytest.raises(InputError, match="classifier"):
        certify_dataset(SPEC, X, Y)
    with pytest.raises(InputError, match="points_per_task: expected an integer >= 1, got 0"):
        certify_dataset(smooth, X, Y, points_per_task=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n0": -5}, "n0: expected an integer >= 0, got -5"),
        ({"n0": "abc"}, "n0: expected an integer >= 0"),
        ({"indices": [5, 6]}, r"indices: expected one integer per point \(1\)"),
        ({"indices": ["a"]}, r"indices: expected one integer per point \(1\)"),
    ],
)
def test_certificates_from_counts_check_n0_and_indices(kwargs, message):
    """They were stored as given (n0=-5 in the JSON, two indices for one point) or ended in a
    raw ValueError."""
    from trustlab.robustness import DatasetCertificate, certify_counts

    with pytest.raises(InputError, match=message):
        DatasetCertificate.from_counts([0], [[90, 10]], [0], sigma=0.5, alpha=0.001, **kwargs)
    if "n0" in kwargs:
        with pytest.raises(InputError, match=message):
            certify_counts([90, 10], 0, 0, sigma=0.5, alpha=0.001, **kwargs)
