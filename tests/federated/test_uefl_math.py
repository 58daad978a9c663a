"""The numeric pieces of UEFL against independent oracles: scipy's entropy, Flower's own FedAvg
aggregation, scikit-learn's KMeans, brute-force nearest codewords and hand-derived gradients."""

import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy as scipy_entropy

from trustlab.errors import InputError
from trustlab.federated import (
    UEFLConfig,
    average_weights,
    kmeans_codebook,
    predictive_entropy,
    select_uncertain,
    uncertainty_threshold,
)
from trustlab.federated.model import VectorQuantizer, build_model
from trustlab.federated.uefl import mc_dropout_probabilities


def _random_probs(seed, shape, zeros):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(shape[-1]) * 0.5, size=shape[:-1])
    if zeros:
        p[..., 0] = 0.0  # a class no pass ever predicts
        p /= p.sum(-1, keepdims=True)
    return p


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    passes=st.integers(1, 6),
    points=st.integers(1, 5),
    classes=st.integers(2, 7),
    zeros=st.booleans(),
)
def test_predictive_entropy_equals_scipy_entropy_of_the_mean(seed, passes, points, classes, zeros):
    probs = _random_probs(seed, (passes, points, classes), zeros)
    expected = scipy_entropy(probs.mean(axis=0), axis=-1)
    assert np.allclose(predictive_entropy(probs), expected, rtol=0, atol=1e-12)


def test_predictive_entropy_of_the_authors_array_layout():
    # The authors' utils.entropy takes (T, silos, N, C) and guards log with the smallest double.
    probs = _random_probs(3, (4, 3, 6, 10), zeros=True)
    mean = probs.mean(axis=0)
    expected = -np.sum(mean * np.log(mean + sys.float_info.min), axis=-1)
    assert np.allclose(predictive_entropy(probs), expected, rtol=0, atol=1e-12)
    assert np.allclose(predictive_entropy(probs), scipy_entropy(mean, axis=-1), atol=1e-12)


def test_average_weights_of_huge_weights_does_not_overflow_to_zero():
    updates = [{"w": np.array([0.0, 2.0])}, {"w": np.array([1.0, 4.0])}]
    assert average_weights(updates, [1e308, 1e308])["w"].tolist() == [0.5, 3.0]


def test_a_silo_with_labels_beyond_num_classes_is_refused():
    from trustlab.federated import Silo, UEFLConfig
    from trustlab.federated.uefl import SiloPlan, SiloState, evaluate_silo, train_silo

    rng = np.random.default_rng(0)
    y = np.arange(12)  # labels 0..11 against the default n_classes=10
    silo = Silo(rng.random((12, 4), dtype=np.float32), y, rng.random((12, 4), dtype=np.float32), y)
    config = UEFLConfig(encoder="mlp")
    for run_silo in (train_silo, evaluate_silo):  # was torch's "Target 10 is out of bounds"
        with pytest.raises(InputError, match="n_classes: expected more than .* label 11"):
            run_silo({}, SiloState(), silo, SiloPlan(0, init_ext=True), config, 1)


def test_predictive_entropy_refuses_scores_that_are_not_probabilities():
    # Logits, or scores not normalised over the classes, gave a negative "entropy" (-4.68).
    with pytest.raises(InputError, match="probabilities: expected probabilities over the last"):
        predictive_entropy(np.array([[[2.0, 3.0]]]))
    with pytest.raises(InputError, match="a row summing to 0.5"):
        predictive_entropy(np.array([[[0.25, 0.25], [0.5, 0.5]]]))
    # float32 softmax rounding is accepted.
    probs = np.array([[[0.3, 0.7 + 1e-6]]], dtype=np.float32)
    assert np.isfinite(predictive_entropy(probs)).all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), clients=st.integers(1, 6))
def test_average_weights_equals_flower_fedavg_aggregation(seed, clients):
    from flwr.app import Array, ArrayRecord, MetricRecord, RecordDict
    from flwr.serverapp.strategy.strategy_utils import aggregate_arrayrecords

    rng = np.random.default_rng(seed)
    shapes = {"encoder.w": (3, 4), "head.b": (5,), "scalar": ()}
    updates = [{k: rng.normal(size=s) for k, s in shapes.items()} for _ in range(clients)]
    counts = rng.integers(1, 500, size=clients)
    records = [
        RecordDict({
            "arrays": ArrayRecord({k: Array(np.asarray(v)) for k, v in u.items()}),
            "metrics": MetricRecord({"num-examples": int(n)}),
        })
        for u, n in zip(updates, counts, strict=True)
    ]  # fmt: skip
    flower = aggregate_arrayrecords(records, "num-examples")
    ours = average_weights(updates, counts)
    for key in shapes:
        assert np.allclose(ours[key], flower[key].numpy(), rtol=0, atol=1e-7)


def test_average_weights_leaves_out_silos_without_a_key():
    shared = [{"w": np.array([1.0]), "vq.books.1": np.array([4.0])}, {"w": np.array([3.0])}]
    out = average_weights(shared, [1, 3])
    assert out["w"].tolist() == [2.5]
    assert out["vq.books.1"].tolist() == [4.0]  # only the silo that has book 1 counts


def test_average_weights_rejects_mismatched_shapes_naming_the_update():
    with pytest.raises(InputError, match=r"updates\[1\]\['w'\]"):
        average_weights([{"w": np.zeros(2)}, {"w": np.zeros(3)}])


@settings(max_examples=30, deadline=None)
@given(
    entropies=st.lists(st.floats(0.0, 3.0), min_size=2, max_size=9),
    factor=st.floats(0.0, 0.5),
    reference=st.sampled_from(["mean", "min"]),
)
def test_threshold_scales_the_reference_and_flags_strictly_above(entropies, factor, reference):
    h = np.array(entropies)
    base = h.mean() if reference == "mean" else h.min()
    theta = uncertainty_threshold(h, factor, reference)
    assert theta == pytest.approx((1 + factor) * base, abs=1e-12)
    assert select_uncertain(h, theta).tolist() == [x > theta for x in h]


def test_kmeans_codebook_equals_sklearn_centroids_up_to_order():
    from sklearn.cluster import KMeans

    features = np.random.default_rng(1).normal(size=(400, 4)) + np.repeat(np.eye(4) * 3, 100, 0)
    ours = kmeans_codebook(features, 8)
    reference = KMeans(n_clusters=8, random_state=0, n_init="auto").fit(features).cluster_centers_
    order = lambda c: c[np.lexsort(c.T[::-1])]  # noqa: E731
    assert np.allclose(order(ours), order(reference), atol=1e-6)


def test_vq_layer_picks_nearest_codewords_with_straight_through_gradients():
    torch.manual_seed(0)
    beta = 0.25
    vq = VectorQuantizer(dim=3, n_codes=5, commitment=beta)
    vq.add_book(1, torch.randn(5, 3))
    vq.active_book = 1
    z = torch.randn(2, 4, 3, requires_grad=True)
    out, loss, perplexity = vq(z)
    codes = torch.cat([vq.books["0"], vq.books["1"]]).detach().numpy()
    flat = z.detach().numpy().reshape(-1, 3)
    nearest = codes[((flat[:, None, :] - codes[None]) ** 2).sum(-1).argmin(1)]
    assert np.allclose(out.detach().numpy().reshape(-1, 3), nearest, atol=1e-6)
    mse = ((nearest - flat) ** 2).mean()
    assert loss.item() == pytest.approx((1 + beta) * mse, rel=1e-5)
    usage = np.bincount(((flat[:, None] - codes[None]) ** 2).sum(-1).argmin(1), minlength=10) / 8
    nz = usage[usage > 0]
    assert perplexity.item() == pytest.approx(np.exp(-(nz * np.log(nz)).sum()), rel=1e-5)
    # Straight through: d(sum(out * g))/dz = g, plus the commitment term beta * 2 (z - e) / n.
    g = torch.randn_like(out)
    (out * g).sum().add(loss).backward()
    expected = g.numpy().reshape(-1, 3) + beta * 2 * (flat - nearest) / flat.size
    assert np.allclose(z.grad.numpy().reshape(-1, 3), expected, atol=1e-6)
    # The codebook moves only through the codebook loss, towards the vectors it serves.
    book1 = vq.books["1"].grad.numpy()
    hits = ((flat[:, None, :] - codes[None]) ** 2).sum(-1).argmin(1)
    manual = np.zeros_like(codes)
    np.add.at(manual, hits, 2 * (nearest - flat) / flat.size)
    assert np.allclose(book1, manual[5:], atol=1e-6)


def test_task_gradient_reaches_the_codewords_and_leaves_the_encoder_gradient_alone():
    torch.manual_seed(1)
    beta = 0.25
    plain = VectorQuantizer(dim=3, n_codes=6, commitment=beta)
    task = VectorQuantizer(dim=3, n_codes=6, commitment=beta, task_gradient=True)
    task.load_state_dict(plain.state_dict())
    z0 = torch.randn(3, 5, 3)
    g = torch.randn(3, 5, 3)
    grads = {}
    for name, vq in (("plain", plain), ("task", task)):
        z = z0.clone().requires_grad_(True)
        out, loss, _ = vq(z)
        (out * g).sum().add(loss).backward()
        grads[name] = (out.detach(), z.grad.clone(), vq.books["0"].grad.clone())
    codes = plain.books["0"].detach().numpy()
    flat = z0.numpy().reshape(-1, 3)
    hits = ((flat[:, None, :] - codes[None]) ** 2).sum(-1).argmin(1)
    # Same forward value (the nearest codewords) and the same encoder gradient.
    # (the task form gives the codewords exactly; z + (e - z) rounds)
    assert np.array_equal(grads["task"][0].numpy().reshape(-1, 3), codes[hits])
    assert torch.allclose(grads["task"][0], grads["plain"][0], atol=1e-6)
    assert torch.allclose(grads["task"][1], grads["plain"][1], atol=1e-7)
    # The codewords get the output's gradient summed over the vectors they serve, on top of
    # the codebook loss (checked by hand, not by autograd).
    task_part = np.zeros_like(codes)
    np.add.at(task_part, hits, g.numpy().reshape(-1, 3))
    book_loss = np.zeros_like(codes)
    np.add.at(book_loss, hits, 2 * (codes[hits] - flat) / flat.size)
    assert np.allclose(grads["plain"][2].numpy(), book_loss, atol=1e-6)
    assert np.allclose(grads["task"][2].numpy(), book_loss + task_part, atol=1e-5)


def test_mc_dropout_is_active_at_evaluation_unless_authors_compat():
    cfg = UEFLConfig(dropout=0.3)
    model = build_model(cfg.model_spec(64, 10), random_state=0)
    X = np.random.default_rng(0).random((20, 64)).astype(np.float32)
    active = mc_dropout_probabilities(model, X, 5, dropout=True, random_state=1)
    frozen = mc_dropout_probabilities(model, X, 5, dropout=False, random_state=1)
    assert active.shape == (5, 20, 10)
    assert np.ptp(active, axis=0).max() > 1e-3  # the passes differ: dropout really is on
    assert np.ptp(frozen, axis=0).max() == 0.0  # eval mode: every pass is the same
    with torch.no_grad():
        model.eval()
        plain = torch.softmax(model(torch.as_tensor(X))[0], 1).double().numpy()
    assert np.allclose(frozen[0], plain, atol=1e-12)
    # Same seed, same masks; torch's global stream is untouched.
    state = torch.random.get_rng_state()
    again = mc_dropout_probabilities(model, X, 5, dropout=True, random_state=1)
    assert np.array_equal(active, again)
    assert torch.equal(state, torch.random.get_rng_state())


def test_local_adam_takes_the_same_steps_as_torch_adam():
    from trustlab.federated.model import Adam

    spec = UEFLConfig().model_spec(64, 10)
    ours, ref = build_model(spec, random_state=1), build_model(spec, random_state=1)
    for model in (ours, ref):  # an extension book that the active book 0 never uses
        model.vq.add_book(1, torch.arange(64.0).reshape(16, 4))
    optimizers = (
        Adam(ours.parameters(), learning_rate=5e-3),
        torch.optim.Adam(ref.parameters(), lr=5e-3),
    )
    gen = torch.Generator().manual_seed(0)
    X, y = torch.rand(48, 64, generator=gen), torch.randint(0, 10, (48,), generator=gen)
    for model, optimizer in zip((ours, ref), optimizers, strict=True):
        torch.manual_seed(0)  # the same dropout masks
        for _ in range(25):
            logits, vq_loss, _ = model(X)
            optimizer.zero_grad()
            (torch.nn.functional.cross_entropy(logits, y) + vq_loss).backward()
            optimizer.step()
    for (name, a), b in zip(ours.named_parameters(), ref.parameters(), strict=True):
        assert torch.equal(a, b), name  # the same arithmetic, bit for bit
    assert torch.equal(ours.vq.books["1"], torch.arange(64.0).reshape(16, 4))


def test_local_training_does_not_import_torch_dynamo():
    # torch.optim.Adam imports torch._dynamo (seconds) in every fresh Flower ClientApp process.
    import subprocess

    code = (
        "import sys\n"
        "from trustlab.federated import UEFLConfig, make_digit_silos\n"
        "from trustlab.federated.uefl import SiloPlan, SiloState, initial_weights, train_silo\n"
        "cfg = UEFLConfig(local_epochs=1, first_book_init='normal')\n"
        "silo = make_digit_silos(2, random_state=0)[0]\n"
        "w = initial_weights(cfg, 64, 10)\n"
        "train_silo(w, SiloState(), silo, SiloPlan(0), cfg, 1)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert done.stdout.strip() == "False"
