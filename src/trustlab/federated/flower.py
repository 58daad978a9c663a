"""UEFL on Flower: a ServerApp, a ClientApp and a strategy, over the Message API of flwr 1.42.

One SuperNode serves one silo. Its ClientApp reads the silo index from the node config
(``partition-id``) and builds its data locally (the shifted digit silo of that index, or the
node's own ``data-path`` .npz file), keeps its codebooks and book index in ``context.state``
between rounds, and replies with the shared arrays only. The ServerApp runs the same
:class:`~trustlab.federated.protocol.ProtocolDriver` as
:func:`trustlab.federated.simulate_uefl`, through :class:`FlowerEngine` and
:class:`UEFLStrategy`: one message per node with that node's own configuration (book index,
k-means initialisation), and an average of the shared weights only. Training is seeded per silo
and round and runs on one thread, so a Flower run ends with the same parameters as the
in-process simulation. When the run config names a ``result-dir``, the ServerApp writes
:data:`RESULT_JSON` and :data:`RESULT_ARRAYS` there.

Deployment (the app project, SuperLink and SuperNode processes, connections) is in
:mod:`trustlab.federated.flower_launch`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_in_range, check_positive_int
from trustlab._lazy import require
from trustlab._results import json_text, write_atomic
from trustlab.errors import BackendError, ConfigError, InputError
from trustlab.federated.protocol import Assignment, ProtocolDriver, _check_finite
from trustlab.federated.silos import SHIFT_PRESETS, load_silo_file, make_silos
from trustlab.federated.uefl import (
    SiloEvaluation,
    SiloPlan,
    SiloState,
    SiloUpdate,
    UEFLConfig,
    average_weights,
    evaluate_silo,
    initial_weights,
    train_silo,
)

try:
    from flwr.app import (
        Array,
        ArrayRecord,
        ConfigRecord,
        Context,
        Message,
        MessageType,
        MetricRecord,
        RecordDict,
    )
    from flwr.clientapp import ClientApp
    from flwr.serverapp import Grid, ServerApp
    from flwr.serverapp.strategy import FedAvg
except ImportError:  # pragma: no cover - flwr comes with the extra
    raise ConfigError.missing_extra("flwr", "federated") from None

__all__ = [
    "UEFLStrategy",
    "FlowerEngine",
    "client_app",
    "server_app",
    "RESULT_JSON",
    "RESULT_ARRAYS",
]

log = logging.getLogger("flwr")

STATE_BOOKS = "uefl-codebooks"
STATE_SILO = "uefl-silo"
#: What the ServerApp writes to its ``result-dir``: the protocol state, node map and seconds
#: (JSON), and the final shared arrays.
RESULT_JSON = "flower_result.json"
RESULT_ARRAYS = "flower_weights.npz"


# --------------------------------------------------------------------------- records <-> numpy


def _to_record(arrays: dict[str, np.ndarray]) -> ArrayRecord:
    return ArrayRecord({k: Array(np.ascontiguousarray(v)) for k, v in arrays.items()})


def _from_record(record: ArrayRecord) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in record.items()}


# --------------------------------------------------------------------------- ClientApp


client_app = ClientApp()


def _node_setup(context: Context, *, torch_threads: bool = True):
    """This node's silo index, silo data, settings and class count, from its configs.

    ``torch_threads`` puts torch on one thread, importing it (train and evaluate need it); the
    roll call only checks the configs and data, and its fresh ClientApp process saves the import
    (about 1.5 s of CPU a node)."""
    if torch_threads:
        _one_thread()
    cfg = UEFLConfig.from_dict(context.run_config)
    node = context.node_config
    if "partition-id" not in node:
        raise InputError.bad("node-config", "a partition-id=<silo index> entry", dict(node))
    index = _whole(node["partition-id"], "partition-id")
    num_classes = _whole(context.run_config.get("num-classes", 10), "num-classes")
    count = _partitions(node, context.run_config, index)
    # A data-path node too: silo indices outside 0..count-1 failed only at the server, after
    # a round of training, with a reply list that named no setting.
    if not 0 <= index < count:
        raise InputError.bad("partition-id", f"a silo index in 0..{count - 1}", index)
    if node.get("data-path"):
        silo = load_silo_file(str(node["data-path"]))
        _check_node_silo(silo, context.run_config, num_classes)
    else:
        shift = str(context.run_config.get("shift", "rotation"))
        check_choice(shift, "shift", SHIFT_PRESETS)  # the run-config key; make_silos says "shifts"
        data = str(context.run_config.get("data", "digits"))
        silo = make_silos(data, count, shift, random_state=cfg.random_state)[index]
        _check_built_silo(silo, data, context.run_config, num_classes)
    return index, silo, cfg, num_classes


def _partitions(node, run_config, index: int) -> int:
    """The number of silos: the app's num-silos, which the node's num-partitions must match
    (a node built silo i of another split, other shifts and rows, without a word)."""
    given = _whole(node.get("num-partitions", index + 1), "num-partitions")
    count = _whole(run_config.get("num-silos", given), "num-silos")
    if "num-partitions" in node and given != count:
        raise InputError.bad("num-partitions", f"{count} (the app's num-silos)", given)
    return count


def _whole(value: Any, name: str) -> int:
    """A whole number of a node or run config (Flower parses partition-id=1 as 1, ="1" as "1");
    the ranges are checked by the caller. int() read partition-id=1.5 and =true as silo 1
    without a word, and ="abc" failed with a ValueError that named no setting."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError.bad(name, "a whole number", value)
    return int(value)


def _check_built_silo(silo, data: str, run_config, num_classes: int) -> None:
    """A node without a data-path builds a silo of the app's data set; the model must fit it
    (an app written for data-path nodes of other sizes failed there with a raw shape error)."""
    features = int(run_config.get("num-features", silo.num_features))
    why = f"the {data} silos' size, which nodes without a data-path build"
    if silo.num_features != features:
        raise InputError.bad("num-features", f"{silo.num_features} ({why})", features)
    top = int(max(silo.y_train.max(), silo.y_test.max()))
    if top >= num_classes:
        raise InputError.bad("num-classes", f"at least {top + 1} ({why})", num_classes)


def _check_node_silo(silo, run_config, num_classes: int) -> None:
    """A node's own data must fit the model the ServerApp built from the run config."""
    features = int(run_config.get("num-features", silo.num_features))
    where = "write_flower_app or trustlab federated flower-app"
    if silo.num_features != features:
        raise InputError.bad(
            "data-path",
            f"{features} features per row (the app's num-features; {where} --n-features)",
            silo.num_features,
        )
    top = int(max(silo.y_train.max(), silo.y_test.max()))
    if top >= num_classes:
        raise InputError.bad(
            "data-path",
            f"labels 0..{num_classes - 1} (the app's num-classes; {where} --n-classes)",
            top,
        )


def _one_thread() -> None:
    require("torch", "federated").set_num_threads(1)


def _silo_state(context: Context, index: int, round_no: int, training: bool) -> SiloState:
    """This silo's codebooks and book index from the node's state. Only the first training
    round starts without them: a node that lost them (a SuperNode restarted mid-run) trained on
    from the common initial book, or refitted its extension by k-means, without a word."""
    if STATE_SILO not in context.state:
        if round_no > 1 or not training:
            raise BackendError(
                f"partition-id {index}: this node holds no codebooks of the run at round "
                f"{round_no} (was its SuperNode restarted?); a silo's codebooks live only on "
                "its node, so the run cannot go on: start it again"
            )
        return SiloState()
    books = _from_record(context.state[STATE_BOOKS]) if STATE_BOOKS in context.state else {}
    return SiloState(books, int(context.state[STATE_SILO]["book-idx"]))


def _store_state(context: Context, state: SiloState) -> None:
    context.state[STATE_BOOKS] = _to_record(state.codebooks)
    context.state[STATE_SILO] = ConfigRecord({"book-idx": int(state.book_idx)})


def _plan(config: ConfigRecord, index: int) -> SiloPlan:
    return SiloPlan(
        silo=index,
        book_idx=int(config.get("book-idx", 0)),
        init_ext=bool(config.get("init-ext", False)),
        use_vq=bool(config.get("use-vq", True)),
    )


@client_app.train()
def _client_train(msg: Message, context: Context) -> Message:
    index, silo, cfg, num_classes = _node_setup(context)
    config = msg.content["config"]
    shared = _from_record(msg.content["arrays"])
    round_no = int(config["server-round"])
    update, state = train_silo(shared, _silo_state(context, index, round_no, True), silo,
                               _plan(config, index), cfg, round_no,
                               n_classes=num_classes)  # fmt: skip
    _store_state(context, state)
    metrics = MetricRecord(
        {"num-examples": update.num_examples, "partition-id": index, **update.metrics}
    )
    return Message(RecordDict({"arrays": _to_record(update.arrays), "metrics": metrics}),
                   reply_to=msg)  # fmt: skip


@client_app.evaluate()
def _client_evaluate(msg: Message, context: Context) -> Message:
    index, silo, cfg, num_classes = _node_setup(context)
    config = msg.content["config"]
    shared = _from_record(msg.content["arrays"])
    round_no = int(config["server-round"])
    result = evaluate_silo(shared, _silo_state(context, index, round_no, False), silo,
                           _plan(config, index), cfg, round_no,
                           n_classes=num_classes)  # fmt: skip
    metrics = MetricRecord({"num-examples": result.num_examples, "partition-id": index,
                            "entropy": result.entropy, "accuracy": result.accuracy})  # fmt: skip
    return Message(RecordDict({"metrics": metrics}), reply_to=msg)


@client_app.query()
def _client_query(msg: Message, context: Context) -> Message:
    """The roll call before the first round: this node's partition-id, once its configs and
    data passed the checks, so that a bad node or two nodes of one silo stop the run before any
    silo trains."""
    index = _node_setup(context, torch_threads=False)[0]
    return Message(RecordDict({"metrics": MetricRecord({"partition-id": index})}), reply_to=msg)


# --------------------------------------------------------------------------- strategy


class UEFLStrategy(FedAvg):
    """FedAvg that configures every node separately and averages only the shared weights.

    Before a round, :meth:`set_assignments` gives each silo its plan (book index, whether to create
    that book by k-means) and its arrays; :meth:`configure_train` then sends each node its own
    ``ConfigRecord``. Nodes are matched to silos by the ``partition-id`` they report; until a
    node has answered once, it gets the plan all silos share (every silo starts on book 0).
    :meth:`aggregate_train` averages the replies sorted by silo with
    :func:`~trustlab.federated.uefl.average_weights` (uniform or by ``num-examples``): the
    in-process engine's average, except that it does not align new shared codebooks. Codebooks never
    appear in replies unless the "shared" codebook mode asks for them. The ServerApp
    (:data:`server_app`) drives it through :class:`FlowerEngine` and the protocol driver, which also
    aligns the codebooks silos have just fitted by k-means before the shared mode averages them.
    Without :meth:`set_assignments` (e.g. under :meth:`Strategy.start`, or with Flower's own
    ``FedAvg`` in its place) every node trains on book 0 from the given arrays, no silo is extended
    and shared codebooks are averaged unaligned: a FedAvg of UEFL's model, not UEFL.

    Every silo trains and is evaluated in every round (the protocol needs each one's reply), so
    FedAvg's ``fraction_train`` and ``fraction_evaluate`` can only be 1.0; other values are
    refused rather than ignored.
    """

    def __init__(self, config: UEFLConfig, n_silos: int, **kwargs: Any):
        if not isinstance(config, UEFLConfig):  # "x" was accepted and failed at the first average
            raise InputError.bad("config", "a UEFLConfig", config)
        n_silos = check_positive_int(n_silos, "n_silos")  # "3" failed at the roll call
        for name in ("fraction_train", "fraction_evaluate"):
            value = kwargs.get(name, 1.0)
            if isinstance(value, bool) or value != 1.0:
                raise InputError.bad(name, "1.0 (UEFL trains and evaluates every silo each round)",
                                     value)  # fmt: skip
        kwargs.setdefault("min_train_nodes", n_silos)
        kwargs.setdefault("min_evaluate_nodes", n_silos)
        kwargs.setdefault("min_available_nodes", n_silos)
        super().__init__(**kwargs)
        self.config = config
        self.n_silos = n_silos
        self.silo_of: dict[int, int] = {}
        self.assignments: dict[int, Assignment] | None = None
        self.last_updates: list[SiloUpdate] = []
        self.last_evaluations: list[SiloEvaluation] = []

    def set_assignments(self, assignments: Sequence[Assignment]) -> None:
        """The next round's plan and arrays of every silo."""
        self.assignments = {plan.silo: (plan, arrays) for plan, arrays in assignments}

    def _assignment_for(self, node_id: int, arrays: ArrayRecord) -> tuple[SiloPlan, dict]:
        if self.assignments is None:
            return SiloPlan(-1), _from_record(arrays)
        silo = self.silo_of.get(node_id)
        if silo is not None:
            return self.assignments[silo]
        first_plan, first_arrays = next(iter(self.assignments.values()))
        for plan, _ in self.assignments.values():
            if (plan.book_idx, plan.init_ext, plan.use_vq) != (
                first_plan.book_idx, first_plan.init_ext, first_plan.use_vq,
            ):  # fmt: skip
                raise BackendError(
                    f"node {node_id} has not reported its partition-id yet, and the silos' "
                    "plans differ; every node must answer the first round"
                )
        return first_plan, first_arrays

    def _messages(self, server_round, arrays, config, grid, message_type) -> list[Message]:
        node_ids = sorted(grid.get_node_ids())
        messages = []
        for node_id in node_ids:
            plan, node_arrays = self._assignment_for(node_id, arrays)
            node_config = ConfigRecord(
                {**dict(config), "server-round": server_round, "book-idx": plan.book_idx,
                 "init-ext": plan.init_ext, "use-vq": plan.use_vq}
            )  # fmt: skip
            content = RecordDict({self.arrayrecord_key: _to_record(node_arrays),
                                  self.configrecord_key: node_config})  # fmt: skip
            messages.append(Message(content=content, message_type=message_type,
                                    dst_node_id=node_id))  # fmt: skip
        return messages

    def configure_train(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                        grid: Grid) -> Iterable[Message]:  # fmt: skip
        return self._messages(server_round, arrays, config, grid, MessageType.TRAIN)

    def configure_evaluate(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                           grid: Grid) -> Iterable[Message]:  # fmt: skip
        return self._messages(server_round, arrays, config, grid, MessageType.EVALUATE)

    def _contents(self, replies: Iterable[Message], what: str) -> list[tuple[int, RecordDict]]:
        out, errors = [], []
        for msg in replies:
            if msg.has_error():
                errors.append(f"node {msg.metadata.src_node_id}: {msg.error.reason}")
                continue
            metrics = msg.content["metrics"]
            silo = int(metrics["partition-id"])
            self.silo_of[msg.metadata.src_node_id] = silo
            out.append((silo, msg.content))
        if errors:
            raise BackendError(f"{what}: a ClientApp failed: " + "; ".join(errors))
        return sorted(out, key=lambda item: item[0])

    def register_nodes(self, replies: Iterable[Message]) -> None:
        """Match the nodes to silos from their roll-call replies (their ``partition-id``), and
        refuse two nodes of one silo or a silo no node serves, before any round (two nodes of
        one silo both trained a round and failed only at the average)."""
        self.silo_of = {}
        self._contents(replies, "roll call")
        nodes: dict[int, list[int]] = {}
        for node_id, silo in sorted(self.silo_of.items()):
            nodes.setdefault(silo, []).append(node_id)
        twice = [f"{silo} on nodes {ids}" for silo, ids in sorted(nodes.items()) if len(ids) > 1]
        unserved = [silo for silo in range(self.n_silos) if silo not in nodes]
        if twice or unserved:
            got = "; ".join(twice + ([f"no node for silo(s) {unserved}"] if unserved else []))
            raise InputError.bad(
                "partition-id",
                f"each silo 0..{self.n_silos - 1} on exactly one SuperNode (node-config "
                "partition-id=<silo index>)",
                got,
            )

    def aggregate_train(self, server_round: int, replies: Iterable[Message]):
        updates = []
        for silo, content in self._contents(replies, "train"):
            metrics = dict(content["metrics"])
            n = int(metrics.pop("num-examples"))
            metrics.pop("partition-id")
            updates.append(SiloUpdate(silo, _from_record(content["arrays"]), n, metrics))
        self.last_updates = updates
        if not updates:
            return None, None
        # a diverged silo is refused as the protocol driver refuses it: averaged, its NaN
        # weights poisoned every shared array (and the mean train-loss) under Strategy.start
        _check_finite(updates, server_round, self.config.learning_rate)
        weights = None if self.config.weighting == "uniform" else [u.num_examples for u in updates]
        averaged = average_weights([u.arrays for u in updates], weights)
        mean = {k: float(np.mean([u.metrics[k] for u in updates])) for k in updates[0].metrics}
        return _to_record(averaged), MetricRecord(mean)

    def aggregate_evaluate(self, server_round: int, replies: Iterable[Message]):
        results = []
        for silo, content in self._contents(replies, "evaluate"):
            m = content["metrics"]
            results.append(SiloEvaluation(silo, float(m["entropy"]), float(m["accuracy"]),
                                          int(m["num-examples"])))  # fmt: skip
        self.last_evaluations = results
        if not results:
            return None
        return MetricRecord({
            "mean-entropy": float(np.mean([r.entropy for r in results])),
            "mean-accuracy": float(np.mean([r.accuracy for r in results])),
        })  # fmt: skip


class FlowerEngine:
    """The protocol driver's engine over a Flower grid: one message per node and round.

    Replies are pulled every ``poll`` seconds (``Grid.send_and_receive`` waits 3 s between
    pulls, which dominates short rounds); a round without every reply after ``timeout``
    seconds raises BackendError.
    """

    def __init__(self, grid: Grid, strategy: UEFLStrategy, timeout: float = 600.0,
                 poll: float = 0.2):  # fmt: skip
        self.grid, self.strategy, self.timeout, self.poll = grid, strategy, timeout, poll

    def roll_call(self) -> None:
        """Ask every node its ``partition-id`` (a query message) and match nodes to silos, so
        that a node with a bad config or data, or two nodes of one silo, fail before round 1."""
        messages = [Message(content=RecordDict({}), message_type=MessageType.QUERY,
                            dst_node_id=node_id)
                    for node_id in sorted(self.grid.get_node_ids())]  # fmt: skip
        self.strategy.register_nodes(self._send_and_receive(messages))

    def train(self, round_no: int, assignments: Sequence[Assignment]) -> list[SiloUpdate]:
        self.strategy.set_assignments(assignments)
        messages = self.strategy.configure_train(round_no, ArrayRecord(), ConfigRecord(), self.grid)
        self.strategy.aggregate_train(round_no, self._send_and_receive(messages))
        return list(self.strategy.last_updates)

    def evaluate(self, round_no: int, assignments: Sequence[Assignment]) -> list[SiloEvaluation]:
        self.strategy.set_assignments(assignments)
        messages = self.strategy.configure_evaluate(round_no, ArrayRecord(), ConfigRecord(),
                                                    self.grid)  # fmt: skip
        self.strategy.aggregate_evaluate(round_no, self._send_and_receive(messages))
        return list(self.strategy.last_evaluations)

    def _send_and_receive(self, messages: Iterable[Message]) -> list[Message]:
        waiting = set(self.grid.push_messages(messages))
        deadline = time.monotonic() + self.timeout
        replies: list[Message] = []
        while waiting:
            pulled = list(self.grid.pull_messages(waiting))
            replies.extend(pulled)
            waiting -= {msg.metadata.reply_to_message_id for msg in pulled}
            if waiting and time.monotonic() > deadline:
                raise BackendError(
                    f"node-timeout: {len(waiting)} node(s) did not reply within {self.timeout:g} s"
                )
            if waiting:
                time.sleep(self.poll)
        return replies


# --------------------------------------------------------------------------- ServerApp


server_app = ServerApp()


@server_app.main()
def _server_main(grid: Grid, context: Context) -> None:
    run_config = context.run_config
    cfg = UEFLConfig.from_dict(run_config)
    if "num-silos" not in run_config:  # a hand-edited pyproject.toml: was a raw KeyError
        raise InputError.bad("num-silos", "the run config's number of silos (write_flower_app "
                             "writes it to [tool.flwr.app.config])", "no num-silos key")  # fmt: skip
    n_silos = _whole(run_config["num-silos"], "num-silos")
    # An edited pyproject.toml or `flwr run --run-config "node-timeout=nan"`: NaN and inf waited
    # for the nodes for good, "x" was a raw ValueError and -1 blamed num-silos.
    timeout = check_in_range(run_config.get("node-timeout", 600), "node-timeout", 0, np.inf,
                             low_open=True, high_open=True)  # fmt: skip
    _one_thread()
    _wait_for_nodes(grid, n_silos, timeout)
    strategy = UEFLStrategy(cfg, n_silos)
    initial = initial_weights(cfg, _whole(run_config.get("num-features", 64), "num-features"),
                              _whole(run_config.get("num-classes", 10), "num-classes"))  # fmt: skip
    driver = ProtocolDriver(cfg, n_silos, initial)
    started = time.perf_counter()

    def on_round(drv: ProtocolDriver, record: dict) -> None:
        log.info("UEFL round %d (iteration %d): book indices %s, entropy %s", record["round"],
                 record["iteration"], record["book_idx"], record["entropy"])  # fmt: skip

    engine = FlowerEngine(grid, strategy, timeout)
    engine.roll_call()
    driver.run(engine, on_round)
    result_dir = str(run_config.get("result-dir", ""))
    if result_dir:
        _write_result(Path(result_dir), driver, time.perf_counter() - started, strategy)
    log.info("UEFL finished after %d rounds; book indices %s", driver.state.round,
             driver.state.book_idx)  # fmt: skip


def _wait_for_nodes(grid: Grid, n_silos: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(list(grid.get_node_ids())) < n_silos:
        if time.monotonic() > deadline:
            raise BackendError(
                f"num-silos: expected {n_silos} SuperNodes, only "
                f"{len(list(grid.get_node_ids()))} connected within {timeout:g} s"
            )
        time.sleep(0.5)


def _write_result(directory: Path, driver: ProtocolDriver, seconds: float, strategy) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / RESULT_ARRAYS, lambda tmp: np.savez(tmp, **driver.arrays))
    meta = {"state": driver.state.to_dict(), "seconds": seconds,
            "nodes": {str(k): v for k, v in strategy.silo_of.items()}}  # fmt: skip
    write_atomic(directory / RESULT_JSON, json_text(meta))
