"""The server protocol with a scripted engine (exact control over entropies), and the Flower
strategy on hand-built messages against Flower's own FedAvg."""

import numpy as np
import pytest

from trustlab.errors import BackendError
from trustlab.federated import ProtocolDriver, SiloEvaluation, SiloUpdate, UEFLConfig
from trustlab.federated.protocol import arrays_for_silo
from trustlab.federated.uefl import SiloPlan


class ScriptedEngine:
    """Replies with fixed arrays and a scripted entropy per evaluation; records every plan."""

    def __init__(self, n_silos, entropies_by_evaluation):
        self.n = n_silos
        self.script = list(entropies_by_evaluation)
        self.train_plans = []
        self.sent = []

    def train(self, round_no, jobs):
        self.train_plans.append([plan for plan, _ in jobs])
        self.sent.append([arrays for _, arrays in jobs])
        return [
            SiloUpdate(plan.silo, {"w": np.full(2, float(plan.silo + round_no))}, 10 * (plan.silo + 1),
                       {"vq-loss": 0.0})
            for plan, _ in reversed(jobs)  # arrival order must not matter
        ]  # fmt: skip

    def evaluate(self, round_no, jobs):
        h = self.script.pop(0)
        return [SiloEvaluation(plan.silo, h[plan.silo], 0.5, 5) for plan, _ in jobs]


def _driver(n, **settings):
    cfg = UEFLConfig(evaluate_every_round=False, **settings)
    return ProtocolDriver(cfg, n, {"w": np.zeros(2), "vq.books.0": np.zeros((2, 2))})


def test_extension_happens_only_for_silos_above_the_threshold():
    script = [[0.2, 0.9, 0.3, 1.5], [0.2, 0.4, 0.3, 1.2], [0.2, 0.1, 0.3, 0.1]]
    engine = ScriptedEngine(4, script)
    driver = _driver(4, rounds=2, rounds_plus=1, max_iterations=5, threshold_factor=0.1)
    state = driver.run(engine)
    theta = 1.1 * np.mean(script[0])
    assert state.threshold == pytest.approx(theta)
    # Iteration 2: silos 1 and 3 (0.9, 1.5 > 0.803) get book 1, created by k-means in their
    # first round only; iteration 3: only silo 3 (1.2) is still above and gets book 2.
    assert [e["flagged"] for e in state.extensions] == [[1, 3], [3]]
    plans = engine.train_plans
    assert [[p.book_idx for p in r] for r in plans] == [
        [0] * 4,
        [0] * 4,
        [0, 1, 0, 1],
        [0, 1, 0, 2],
    ]
    assert [[p.init_ext for p in r] for r in plans] == [
        [True] * 4, [False] * 4, [False, True, False, True], [False, False, False, True]
    ]  # fmt: skip
    assert state.finished and state.book_idx == [0, 1, 0, 2] and state.round == 4


def test_threshold_is_fixed_after_iteration_one_and_iterations_are_capped():
    engine = ScriptedEngine(2, [[1.0, 3.0], [0.5, 2.9], [0.5, 2.8]])
    state = _driver(2, rounds=1, rounds_plus=1, max_iterations=2).run(engine)
    assert state.threshold == pytest.approx(1.1 * 2.0)  # from the first evaluation only
    assert state.iteration == 2 and len(state.extensions) == 1  # silo 1 still above: capped
    assert len(engine.script) == 1  # the third evaluation never ran


def test_no_silo_above_the_threshold_ends_after_iteration_one():
    state = _driver(3, rounds=2, threshold_factor=0.5).run(ScriptedEngine(3, [[1.0, 1.1, 1.2]]))
    assert state.extensions == [] and state.round == 2 and state.book_idx == [0, 0, 0]


def test_server_average_is_uniform_or_by_examples_and_ignores_arrival_order():
    for weighting, weights in (("uniform", [1, 1, 1]), ("examples", [10, 20, 30])):
        driver = _driver(3, rounds=1, weighting=weighting)
        driver.run(ScriptedEngine(3, [[1, 1, 1]]))
        expected = np.average([1.0, 2.0, 3.0], weights=weights)
        assert np.allclose(driver.arrays["w"], expected, atol=1e-12)


def test_local_codebooks_never_leave_the_silo_and_shared_books_go_to_their_users():
    local = _driver(2)
    assert "vq.books.0" not in local.arrays
    glob = {
        "w": np.zeros(1),
        "vq.books.0": np.ones(1),
        "vq.books.1": np.ones(1),
        "vq.books.2": np.ones(1),
    }
    sent = arrays_for_silo(glob, SiloPlan(0, book_idx=2), "shared")
    assert sorted(sent) == ["vq.books.0", "vq.books.2", "w"]
    assert sorted(arrays_for_silo(glob, SiloPlan(0, book_idx=2, init_ext=True), "shared")) == [
        "vq.books.0", "w"
    ]  # fmt: skip
    assert sorted(arrays_for_silo(glob, SiloPlan(0, book_idx=2), "local")) == ["w"]


def test_a_missing_reply_is_a_backend_error():
    class Silent(ScriptedEngine):
        def train(self, round_no, jobs):
            return super().train(round_no, jobs)[:1]

    with pytest.raises(BackendError, match="one reply from each"):
        _driver(2).step(Silent(2, []))


# ----------------------------------------------------------------- the Flower strategy


def _reply(node_id, silo, arrays, n, run_id=1):
    from flwr.app import Array, ArrayRecord, Message, Metadata, MetricRecord, RecordDict

    content = RecordDict({
        "arrays": ArrayRecord({k: Array(np.asarray(v)) for k, v in arrays.items()}),
        "metrics": MetricRecord({"num-examples": n, "partition-id": silo, "vq-loss": 0.1 * silo}),
    })  # fmt: skip
    meta = Metadata(run_id=run_id, message_id=f"m{node_id}", src_node_id=node_id, dst_node_id=0,
                    reply_to_message_id=f"q{node_id}", group_id="", created_at=0.0, ttl=60.0,
                    message_type="train")  # fmt: skip
    return Message(content=content, metadata=meta)


@pytest.mark.parametrize("weighting", ["uniform", "examples"])
def test_strategy_aggregation_equals_flower_fedavg_on_the_shared_weights(weighting):
    from flwr.serverapp.strategy import FedAvg

    from trustlab.federated.flower import UEFLStrategy

    rng = np.random.default_rng(0)
    counts = [30, 50, 30] if weighting == "examples" else [40, 40, 40]
    replies = [
        _reply(100 + s, s, {"encoder.w": rng.normal(size=(2, 3)), "head.b": rng.normal(size=4)}, n)
        for s, n in enumerate(counts)
    ]
    strategy = UEFLStrategy(UEFLConfig(weighting=weighting), 3)
    ours, metrics = strategy.aggregate_train(1, list(reversed(replies)))
    flower, _ = FedAvg(min_available_nodes=3).aggregate_train(1, replies)
    assert sorted(ours.keys()) == ["encoder.w", "head.b"]  # no codebook key appears
    for key in ours.keys():
        assert np.allclose(ours[key].numpy(), flower[key].numpy(), rtol=0, atol=1e-7)
    assert strategy.silo_of == {100: 0, 101: 1, 102: 2}
    assert metrics["vq-loss"] == pytest.approx(0.1)


def test_strategy_sends_each_node_its_own_configuration():
    from flwr.app import Array, ArrayRecord, ConfigRecord
    from flwr.supercore.task_identity import TaskIdentity

    from trustlab.federated.flower import UEFLStrategy

    class Grid:
        def get_node_ids(self):
            return [7, 5]

    strategy = UEFLStrategy(UEFLConfig(), 2)
    given = ArrayRecord({"w": Array(np.ones(2))})
    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 0, 1
    try:
        # Without plans (as under Strategy.start): book 0 and the given arrays for every node.
        plain = strategy.configure_train(1, given, ConfigRecord({"lr": 0.1}), Grid())
        strategy.silo_of = {5: 0, 7: 1}
        strategy.set_assignments([(SiloPlan(0, 0, False), {"w": np.zeros(2)}),
                           (SiloPlan(1, 1, True), {"w": np.zeros(2)})])  # fmt: skip
        messages = strategy.configure_train(3, given, ConfigRecord(), Grid())
    finally:
        TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved
    for message in plain:
        config = message.content["config"]
        assert config["book-idx"] == 0 and config["init-ext"] is False and config["lr"] == 0.1
        assert message.content["arrays"]["w"].numpy().tolist() == [1.0, 1.0]
    by_node = {m.metadata.dst_node_id: m.content["config"] for m in messages}
    assert by_node[5]["book-idx"] == 0 and by_node[5]["init-ext"] is False
    assert by_node[7]["book-idx"] == 1 and by_node[7]["init-ext"] is True
    assert by_node[7]["server-round"] == 3
