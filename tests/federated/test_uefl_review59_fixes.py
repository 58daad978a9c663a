"""Review 59: average_weights truncated the mean of integer arrays ([1] and [2] gave [1], where
Flower's FedAvg gives 1.5); the driver's threshold_reference="min" and evaluate_silo's
authors_compat flag were never reached by a test (either could be dropped with every test
green); a node's partition-id of 1.5 or true served silo 1 without a word; features beyond
float32 range became inf and failed a round later naming NaN, not the silo."""

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

from trustlab.errors import InputError
from trustlab.federated import (
    ProtocolDriver,
    Silo,
    SiloEvaluation,
    SiloUpdate,
    UEFLConfig,
    simulate_uefl,
)
from trustlab.federated.model import build_model, load_arrays
from trustlab.federated.silos import check_silo, make_digit_silos
from trustlab.federated.uefl import SiloPlan, SiloState, average_weights, evaluate_silo


def test_integer_arrays_average_to_their_exact_mean_as_flowers_fedavg():
    from flwr.app import Array, ArrayRecord, MetricRecord, RecordDict
    from flwr.serverapp.strategy.strategy_utils import aggregate_arrayrecords

    updates = [{"count": np.array([1, 3]), "flag": np.array([True])},
               {"count": np.array([2, 4]), "flag": np.array([False])}]  # fmt: skip
    ours = average_weights(updates, [1, 3])
    # By hand: (1*1 + 3*2) / 4 = 1.75, (1*3 + 3*4) / 4 = 3.75; True/False as 1/0: 0.25.
    assert ours["count"].tolist() == [1.75, 3.75] and ours["count"].dtype == np.float64
    assert ours["flag"].tolist() == [0.25]
    records = [
        RecordDict({"arrays": ArrayRecord({"count": Array(u["count"])}),
                    "metrics": MetricRecord({"num-examples": n})})
        for u, n in zip(updates, (1, 3), strict=True)
    ]  # fmt: skip
    flower = aggregate_arrayrecords(records, "num-examples")["count"].numpy()
    assert np.allclose(ours["count"], flower, rtol=0, atol=1e-12)
    # Float keys keep their dtype, as the model's float32 arrays must.
    f32 = average_weights([{"w": np.ones(2, np.float32)}, {"w": np.zeros(2, np.float32)}])
    assert f32["w"].dtype == np.float32 and f32["w"].tolist() == [0.5, 0.5]


class _Scripted:
    """Fixed replies; one scripted entropy list per evaluation."""

    def __init__(self, script):
        self.script = list(script)

    def train(self, round_no, jobs):
        return [SiloUpdate(p.silo, {"w": np.zeros(1)}, 10, {}) for p, _ in jobs]

    def evaluate(self, round_no, jobs):
        h = self.script.pop(0)
        return [SiloEvaluation(p.silo, h[p.silo], 0.5, 5) for p, _ in jobs]


@pytest.mark.parametrize(("reference", "flagged"), [("min", [1, 2]), ("mean", [2])])
def test_the_driver_fixes_its_threshold_from_the_reference_asked_for(reference, flagged):
    # min 0.5 -> theta 1.1 * 0.5 = 0.55 flags 0.6 and 1.3; mean 0.8 -> 0.88 flags only 1.3.
    cfg = UEFLConfig(rounds=1, rounds_plus=1, max_iterations=2, threshold_factor=0.1,
                     threshold_reference=reference, evaluate_every_round=False)  # fmt: skip
    driver = ProtocolDriver(cfg, 3, {"w": np.zeros(1)})
    state = driver.run(_Scripted([[0.5, 0.6, 1.3], [0.1, 0.1, 0.1]]))
    base = 0.5 if reference == "min" else 0.8
    assert state.threshold == pytest.approx(1.1 * base, abs=1e-12)
    assert state.extensions[0]["flagged"] == flagged


@pytest.mark.parametrize("compat", [True, False])
def test_authors_compat_measures_the_plain_softmax_entropy_and_otherwise_mc_dropout(compat):
    import torch

    cfg = UEFLConfig(dropout=0.3, mc_passes=5, authors_compat=compat)
    silo = make_digit_silos(2, "none", random_state=0)[0]
    spec = cfg.model_spec(64, 10)
    model = build_model(spec, random_state=cfg.random_state)
    books = {"vq.books.0": np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)}
    result = evaluate_silo({}, SiloState(books), silo, SiloPlan(0), cfg, 1, n_classes=10)
    load_arrays(model, books)
    model.eval()
    with torch.no_grad():
        plain = torch.softmax(model(torch.as_tensor(silo.X_test))[0], 1).double().numpy()
    softmax_entropy = float(scipy_entropy(plain, axis=1).mean())
    # The authors' validate(): eval mode, every pass the same -> the softmax entropy. scipy
    # renormalises each float32 softmax row (sums 1 +- 1e-7), so the two agree to about 1e-8.
    if compat:
        assert result.entropy == pytest.approx(softmax_entropy, abs=1e-6)
    else:  # dropout on in the head: 5 masked passes average to another prediction (7.3e-4 nats
        # away for this untrained model, whose softmax is near uniform: entropy ~ log 10)
        assert abs(result.entropy - softmax_entropy) > 1e-4
    assert result.accuracy == pytest.approx(float((plain.argmax(1) == silo.y_test).mean()))


@pytest.mark.parametrize(
    ("node", "argument", "got"),
    [({"partition-id": 1.5}, "partition-id", "1.5"), ({"partition-id": True}, "partition-id", "True"),
     ({"partition-id": "abc"}, "partition-id", "'abc'"),
     ({"partition-id": 1, "num-partitions": "x"}, "num-partitions", "'x'")],
)  # fmt: skip
def test_a_node_config_index_that_is_not_a_whole_number_is_refused_by_name(node, argument, got):
    # Flower parses --node-config "partition-id=1.5" as 1.5, =true as True, ="abc" as "abc":
    # int() made the first two silo 1 without a word and the last a ValueError naming nothing.
    from types import SimpleNamespace

    from trustlab.federated.flower import _node_setup

    run_config = {"num-silos": 3, "num-features": 64, "num-classes": 10}
    context = SimpleNamespace(run_config=run_config, node_config=node)
    with pytest.raises(InputError) as err:
        _node_setup(context)
    assert str(err.value) == f"{argument}: expected a whole number, got {got}"
    quoted = SimpleNamespace(run_config=run_config, node_config={"partition-id": "2"})
    assert _node_setup(quoted)[0] == 2  # partition-id="2" (a TOML string) still reads as 2


@pytest.mark.parametrize("value", [1e39, -4e38])
def test_features_beyond_float32_range_are_refused_naming_the_silo(value):
    # float32 made 1e39 inf: UEFL trained a round and failed naming "features" (k-means) or
    # "probabilities" (book 0 drawn from the seed) with NaN, not the silo's value.
    silos = make_digit_silos(2, "none", random_state=0)
    X = silos[1].X_test.astype(np.float64)
    X[2, 5] = value
    bad = Silo(silos[1].X_train, silos[1].y_train, X, silos[1].y_test)
    with pytest.raises(InputError) as err:
        simulate_uefl([silos[0], bad], rounds=1, max_iterations=1, baselines=())
    assert err.value.argument == "silos[1].X_test"
    assert f"got {value:g} at index (2, 5)" in str(err.value)
    X[2, 5] = 3e38  # within float32 range: accepted (rounded, finite)
    silo = Silo(silos[1].X_train, silos[1].y_train, X, silos[1].y_test)
    assert np.isfinite(check_silo(silo, "silo").X_test).all()


def test_a_checkpoint_of_other_silo_data_with_the_same_settings_is_refused(tmp_path):
    # Only a change of settings was tested (random_state); the fingerprint's silo data could be
    # dropped with every test green, and then a run resumed another data set's state.
    silos = make_digit_silos(2, "none", random_state=0)
    settings = dict(rounds=1, max_iterations=1, local_epochs=1, mc_passes=2, baselines=())
    simulate_uefl(silos, checkpoint=tmp_path, **settings)
    assert simulate_uefl(silos, checkpoint=tmp_path, **settings).resumed
    y = silos[1].y_test.copy()
    y[0] = (y[0] + 1) % 10  # one test label differs
    other = [silos[0], Silo(silos[1].X_train, silos[1].y_train, silos[1].X_test, y)]
    with pytest.raises(InputError, match="other data or settings") as err:
        simulate_uefl(other, checkpoint=tmp_path, **settings)
    assert err.value.argument == "checkpoint"


def test_public_entry_points_refuse_bad_arguments_by_name():
    # Each was accepted: eps=-1 or NaN gave NaN entropies; a codebook of another size came back
    # cut to its rows (another width was a raw broadcast ValueError); ProtocolDriver with
    # n_silos=0 or -1 planned no silo, and a dict config was an AttributeError; UEFLStrategy
    # took config="x" and n_silos="3", failing later in the run.
    from trustlab.federated.flower import UEFLStrategy
    from trustlab.federated.protocol import align_codebook
    from trustlab.federated.uefl import predictive_entropy

    half = np.full((2, 1, 2), 0.5)
    assert predictive_entropy(half, eps=0.0)[0] == pytest.approx(np.log(2), abs=1e-15)
    for eps in (-1.0, np.nan, np.inf):
        with pytest.raises(InputError, match="^eps: expected a number in"):
            predictive_entropy(half, eps=eps)
    ref = np.arange(8.0).reshape(4, 2)
    assert np.array_equal(align_codebook(ref, ref[::-1]), ref)
    for book in (np.zeros((3, 2)), np.zeros((4, 3))):
        with pytest.raises(InputError, match=r"^book: expected shape \(4, 2\)"):
            align_codebook(ref, book)
    arrays = {"w": np.zeros(1)}
    for n in (0, -1, "3", 2.0):
        with pytest.raises(InputError, match="^n_silos: expected an integer >= 1"):
            ProtocolDriver(UEFLConfig(), n, arrays)
        with pytest.raises(InputError, match="^n_silos: expected an integer >= 1"):
            UEFLStrategy(UEFLConfig(), n)
    for config in ({"rounds": 1}, "x", None):
        with pytest.raises(InputError, match="^config: expected a UEFLConfig"):
            ProtocolDriver(config, 2, arrays)
        with pytest.raises(InputError, match="^config: expected a UEFLConfig"):
            UEFLStrategy(config, 2)


class _Stop(Exception):
    pass


def test_uefl_interrupted_mid_run_resumes_with_its_silos_codebooks(tmp_path):
    # The resume tests stopped in FedAvg (no codebooks) or resumed a finished run: with the
    # silos' codebooks left out of Checkpoint.restore every resume test still passed. Stops
    # after round 1: silo 0 goes on with its trained book 0, silo 1 gets its extension.
    settings = dict(n_silos=2, rounds=1, rounds_plus=1, max_iterations=2, local_epochs=1,
                    mc_passes=2, threshold_factor=0.0, baselines=(), random_state=5)  # fmt: skip
    reference = simulate_uefl(**settings).methods["uefl"]

    def stop(done, total):
        if done == 1:
            raise _Stop

    with pytest.raises(_Stop):
        simulate_uefl(checkpoint=tmp_path, progress=stop, **settings)
    resumed = simulate_uefl(checkpoint=tmp_path, **settings)
    run = resumed.methods["uefl"]
    assert resumed.resumed and len(run.rounds) == len(reference.rounds) == 2
    assert run.extensions == reference.extensions and run.extensions[0]["flagged"] == [1]
    for key, value in reference.weights.items():  # same seeds, one thread: bit for bit
        assert np.array_equal(run.weights[key], value), key
    assert np.array_equal(run.entropy, reference.entropy)
    assert np.array_equal(run.accuracy, reference.accuracy)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("call", "name"),
    [("run_flower_app", "connect_timeout"), ("run_flower_app", "timeout"),
     ("run_loopback", "startup_timeout"), ("run_loopback", "timeout")],
)  # fmt: skip
@pytest.mark.parametrize("value", [np.nan, -5.0, 0.0, np.inf])
def test_flower_waits_must_be_positive_finite_seconds(tmp_path, call, name, value):
    # run_flower_app(connect_timeout=nan) waited for an absent SuperLink for good (NaN never
    # passes a deadline); run_loopback(timeout=-5) was refused as "node_timeout". Refused
    # before any file is written or process started.
    from trustlab.federated import flower_launch

    if call == "run_flower_app":
        app = flower_launch.write_flower_app(tmp_path / "app", n_silos=2, result_dir=tmp_path)
        run = lambda: flower_launch.run_flower_app(app, "127.0.0.1:1", **{name: value})  # noqa: E731
    else:
        run = lambda: flower_launch.run_loopback(workdir=tmp_path / "lb", **{name: value})  # noqa: E731
    with pytest.raises(InputError, match=rf"^{name}: expected a number in \(0, inf\)"):
        run()
    assert not (tmp_path / "lb").exists()
