"""UEFL on Flower: a ServerApp, a ClientApp and a strategy, over the Message API of flwr 1.42.

One SuperNode serves one silo. Its ClientApp reads the silo index from the node config
(``partition-id``) and builds its data locally (the shifted digit silo of that index, or the
node's own ``data-path`` .npz file), keeps its codebooks and book index in ``context.state``
between rounds, and replies with the shared arrays only. The ServerApp runs the same
:class:`~trustlab.federated._protocol.ProtocolDriver` as :func:`trustlab.federated.simulate`,
with :class:`UEFLStrategy` as its engine: one message per node with that node's own
configuration (book index, k-means initialisation), and an average of the shared weights only.
Training is seeded per silo and round and runs on one thread, so a Flower run ends with the
same parameters as the in-process simulation.

:func:`write_flower_app` writes the Flower App project that ``flwr run`` submits;
:func:`run_flower_app` submits it to a SuperLink; :func:`run_loopback` starts a SuperLink and
one SuperNode per silo on 127.0.0.1 and runs the app on them (tests, benchmarks, a demo).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trustlab.errors import BackendError, ConfigError, InputError
from trustlab.federated._data import DATASETS, SHIFT_PRESETS, load_silo_file, make_silos
from trustlab.federated._protocol import Job, ProtocolDriver, ProtocolState
from trustlab.federated.uefl import (
    SiloEvaluation,
    SiloPlan,
    SiloState,
    SiloUpdate,
    UEFLConfig,
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
    "FlowerRunResult",
    "client_app",
    "server_app",
    "write_flower_app",
    "run_flower_app",
    "run_loopback",
    "launch_commands",
]

log = logging.getLogger("flwr")

STATE_BOOKS = "uefl-codebooks"
STATE_SILO = "uefl-silo"
RESULT_JSON = "flower_result.json"
RESULT_ARRAYS = "flower_weights.npz"
APP_NAME = "trustlab-uefl"


# --------------------------------------------------------------------------- records <-> numpy


def _to_record(arrays: dict[str, np.ndarray]) -> ArrayRecord:
    return ArrayRecord({k: Array(np.ascontiguousarray(v)) for k, v in arrays.items()})


def _from_record(record: ArrayRecord) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in record.items()}


# --------------------------------------------------------------------------- ClientApp


client_app = ClientApp()


def _node_setup(context: Context):
    """This node's silo index, silo data, settings and class count, from its configs."""
    _one_thread()
    cfg = UEFLConfig.from_dict(context.run_config)
    node = context.node_config
    if "partition-id" not in node:
        raise InputError.bad("node-config", "a partition-id=<silo index> entry", dict(node))
    index = int(node["partition-id"])
    if node.get("data-path"):
        silo = load_silo_file(str(node["data-path"]))
    else:
        count = int(node.get("num-partitions", context.run_config.get("num-silos", index + 1)))
        shift = str(context.run_config.get("shift", "rotation"))
        data = str(context.run_config.get("data", "digits"))
        silo = make_silos(data, count, shift, random_state=cfg.seed)[index]
    return index, silo, cfg, int(context.run_config.get("num-classes", 10))


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _silo_state(context: Context) -> SiloState:
    if STATE_SILO not in context.state:
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
    update, state = train_silo(shared, _silo_state(context), silo, _plan(config, index), cfg,
                               int(config["server-round"]), num_classes=num_classes)  # fmt: skip
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
    result = evaluate_silo(shared, _silo_state(context), silo, _plan(config, index), cfg,
                           int(config["server-round"]), num_classes=num_classes)  # fmt: skip
    metrics = MetricRecord({"num-examples": result.num_examples, "partition-id": index,
                            "entropy": result.entropy, "accuracy": result.accuracy})  # fmt: skip
    return Message(RecordDict({"metrics": metrics}), reply_to=msg)


# --------------------------------------------------------------------------- strategy


class UEFLStrategy(FedAvg):
    """FedAvg that configures every node separately and averages only the shared weights.

    Before a round, :meth:`set_jobs` gives each silo its plan (book index, whether to create
    that book by k-means) and its arrays; :meth:`configure_train` then sends each node its own
    ``ConfigRecord``. Nodes are matched to silos by the ``partition-id`` they report; until a
    node has answered once, it gets the plan all silos share (every silo starts on book 0).
    :meth:`aggregate_train` averages the replies sorted by silo with
    :func:`~trustlab.federated.uefl.average_weights` (uniform or by ``num-examples``), so the
    result equals the in-process engine's. Codebooks never appear in replies unless the
    "shared" codebook mode asks for them. Without :meth:`set_jobs` (e.g. under
    :meth:`Strategy.start`) every node trains on book 0 from the given arrays.
    """

    def __init__(self, config: UEFLConfig, n_silos: int, **kwargs: Any):
        kwargs.setdefault("min_train_nodes", n_silos)
        kwargs.setdefault("min_evaluate_nodes", n_silos)
        kwargs.setdefault("min_available_nodes", n_silos)
        super().__init__(**kwargs)
        self.config = config
        self.n_silos = n_silos
        self.silo_of: dict[int, int] = {}
        self.jobs: dict[int, Job] | None = None
        self.last_updates: list[SiloUpdate] = []
        self.last_evaluations: list[SiloEvaluation] = []

    def set_jobs(self, jobs: Sequence[Job]) -> None:
        self.jobs = {plan.silo: (plan, arrays) for plan, arrays in jobs}

    def _job_for(self, node_id: int, arrays: ArrayRecord) -> tuple[SiloPlan, dict]:
        if self.jobs is None:
            return SiloPlan(-1), _from_record(arrays)
        silo = self.silo_of.get(node_id)
        if silo is not None:
            return self.jobs[silo]
        first_plan, first_arrays = next(iter(self.jobs.values()))
        for plan, _ in self.jobs.values():
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
            plan, node_arrays = self._job_for(node_id, arrays)
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

    def aggregate_train(self, server_round: int, replies: Iterable[Message]):
        from trustlab.federated.uefl import average_weights

        updates = []
        for silo, content in self._contents(replies, "train"):
            metrics = dict(content["metrics"])
            n = int(metrics.pop("num-examples"))
            metrics.pop("partition-id")
            updates.append(SiloUpdate(silo, _from_record(content["arrays"]), n, metrics))
        self.last_updates = updates
        if not updates:
            return None, None
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

    def train(self, round_no: int, jobs: Sequence[Job]) -> list[SiloUpdate]:
        self.strategy.set_jobs(jobs)
        messages = self.strategy.configure_train(round_no, ArrayRecord(), ConfigRecord(), self.grid)
        self.strategy.aggregate_train(round_no, self._send_and_receive(messages))
        return list(self.strategy.last_updates)

    def evaluate(self, round_no: int, jobs: Sequence[Job]) -> list[SiloEvaluation]:
        self.strategy.set_jobs(jobs)
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
    n_silos = int(run_config["num-silos"])
    timeout = float(run_config.get("node-timeout", 600))
    _one_thread()
    _wait_for_nodes(grid, n_silos, timeout)
    strategy = UEFLStrategy(cfg, n_silos)
    initial = initial_weights(cfg, int(run_config.get("num-features", 64)),
                              int(run_config.get("num-classes", 10)))  # fmt: skip
    driver = ProtocolDriver(cfg, n_silos, initial)
    started = time.perf_counter()

    def on_round(drv: ProtocolDriver, record: dict) -> None:
        log.info("UEFL round %d (iteration %d): book indices %s, entropy %s", record["round"],
                 record["iteration"], record["book_idx"], record["entropy"])  # fmt: skip

    driver.run(FlowerEngine(grid, strategy, timeout), on_round)
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
    np.savez(directory / RESULT_ARRAYS, **driver.arrays)
    meta = {"state": driver.state.to_dict(), "seconds": seconds,
            "nodes": {str(k): v for k, v in strategy.silo_of.items()}}  # fmt: skip
    tmp = directory / (RESULT_JSON + ".tmp")
    tmp.write_text(json.dumps(meta))
    os.replace(tmp, directory / RESULT_JSON)


# --------------------------------------------------------------------------- app project and runs


@dataclass(frozen=True)
class FlowerRunResult:
    """The end of a Flower run: the protocol state (history, book indices, threshold), the
    final shared arrays, the node -> silo map and the wall time (of the ServerApp loop, and of
    the whole launch when started by :func:`run_loopback`)."""

    state: ProtocolState
    weights: dict[str, np.ndarray] = field(repr=False)
    nodes: dict[str, int]
    seconds: float
    wall_seconds: float
    log: str = field(default="", repr=False)

    @property
    def rounds(self) -> int:
        return self.state.round

    def to_dict(self) -> dict[str, Any]:
        last = self.state.history[-1] if self.state.history else {}
        return {
            "rounds": self.state.round,
            "book_idx": list(self.state.book_idx),
            "threshold": self.state.threshold,
            "extensions": self.state.extensions,
            "final_entropy": last.get("entropy"),
            "final_accuracy": last.get("accuracy"),
            "nodes": self.nodes,
            "seconds": float(self.seconds),
            "wall_seconds": float(self.wall_seconds),
        }

    def summary(self) -> str:
        d = self.to_dict()
        lines = [f"Flower UEFL run: {d['rounds']} rounds over {len(self.nodes)} SuperNodes in "
                 f"{d['wall_seconds']:.1f} s (server loop {d['seconds']:.1f} s)",
                 f"  final book indices: {d['book_idx']}"]  # fmt: skip
        if d["final_accuracy"] is not None:
            lines.append("  final accuracy: " + ", ".join(f"{a:.3f}" for a in d["final_accuracy"]))
            lines.append("  final entropy:  " + ", ".join(f"{h:.3f}" for h in d["final_entropy"]))
        return "\n".join(lines)


def write_flower_app(
    directory: str | os.PathLike,
    config: UEFLConfig | None = None,
    *,
    n_silos: int = 3,
    shift: str = "rotation",
    data: str = "digits",
    result_dir: str | os.PathLike | None = None,
    num_features: int | None = None,
    num_classes: int = 10,
    node_timeout: float = 600.0,
) -> Path:
    """Write the Flower App project (a ``pyproject.toml``) that ``flwr run`` submits.

    The components are ``trustlab.federated.flower:server_app`` and ``:client_app``, so every
    machine running a SuperLink or SuperNode needs trustlab with the ``federated`` extra
    installed; the run config holds every :class:`UEFLConfig` field plus ``num-silos``,
    ``shift`` and ``data`` (the preset and data set, "digits" or "mnist", of the silos that
    nodes without ``data-path`` build), ``result-dir``
    (where the ServerApp writes ``flower_result.json`` and ``flower_weights.npz``; on the
    SuperLink's machine), ``num-features``, ``num-classes`` and ``node-timeout`` (seconds to
    wait for nodes and replies; ``num_features`` defaults to the data set's: 64 for digits,
    196 for MNIST at 14 x 14). Returns the project directory.

    Examples
    --------
    >>> import tempfile
    >>> app = write_flower_app(tempfile.mkdtemp(), n_silos=2)
    >>> (app / "pyproject.toml").is_file()
    True
    """
    cfg = config if config is not None else UEFLConfig()
    if not isinstance(cfg, UEFLConfig):
        raise InputError.bad("config", "a UEFLConfig", cfg)
    if shift not in SHIFT_PRESETS:
        raise InputError.bad("shift", f"one of {', '.join(SHIFT_PRESETS)}", shift)
    if data not in DATASETS:
        raise InputError.bad("data", f"one of {', '.join(DATASETS)}", data)
    if num_features is None:
        num_features = 64 if data == "digits" else 196
    if isinstance(n_silos, bool) or not isinstance(n_silos, int) or n_silos < 2:
        raise InputError.bad("n_silos", "an integer >= 2", n_silos)
    run_config: dict[str, Any] = {k.replace("_", "-"): v for k, v in cfg.to_dict().items()}
    run_config.update({
        "num-silos": n_silos, "shift": shift, "data": data, "num-features": int(num_features),
        "num-classes": int(num_classes), "node-timeout": float(node_timeout),
        "result-dir": "" if result_dir is None else str(Path(result_dir).resolve()),
    })  # fmt: skip
    lines = [
        "# A Flower App running trustlab's UEFL; written by trustlab.federated.flower.",
        "[build-system]", 'requires = ["hatchling"]', 'build-backend = "hatchling.build"', "",
        "[project]", f'name = "{APP_NAME}"', 'version = "1.0.0"',
        'description = "UEFL: uncertainty-based extensible-codebook federated learning"',
        'license = "MIT"',
        "# The nodes need trustlab[federated] installed; nothing is installed at run time.",
        "dependencies = []", "",
        "[tool.flwr.app]", 'publisher = "trustlab"', "",
        "[tool.flwr.app.components]",
        'serverapp = "trustlab.federated.flower:server_app"',
        'clientapp = "trustlab.federated.flower:client_app"', "",
        "[tool.flwr.app.config]",
        *(f"{key} = {_toml_value(value)}" for key, value in run_config.items()),
    ]  # fmt: skip
    app = Path(directory)
    app.mkdir(parents=True, exist_ok=True)
    (app / "pyproject.toml").write_text("\n".join(lines) + "\n")
    return app


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def launch_commands(n_silos: int = 3, app_dir: str = "uefl-app", port: int = 9093) -> str:
    """The shell commands that run the app on one machine (insecure loopback), as text."""
    lines = [f"flower-superlink --insecure --port {port} --disable-runtime-dependency-installation"]
    lines += [
        f"flower-supernode --insecure --superlink 127.0.0.1:{port} --port {port + 1 + i} "
        f'--node-config "partition-id={i} num-partitions={n_silos}"'
        for i in range(n_silos)
    ]
    lines.append(f"# with [superlink.loopback] address = \"127.0.0.1:{port}\", insecure = true "
                 "in $FLWR_HOME/config.toml:")  # fmt: skip
    lines.append(f"flwr run {app_dir} loopback --stream")
    return "\n".join(lines)


def _executable(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.is_file() else shutil.which(name)
    if found is None:
        raise ConfigError.missing_extra("flwr", "federated")
    return found


def _flower_env(flwr_home: Path) -> dict[str, str]:
    env = dict(os.environ)
    # SuperLink and SuperNode start flower-superexec and the app processes from the PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update({
        "FLWR_HOME": str(flwr_home), "FLWR_TELEMETRY_ENABLED": "0",
        "FLWR_DISABLE_UPDATE_CHECK": "1", "PYTHONUNBUFFERED": "1",
        # SuperExec looks for new tasks every second by default.
        "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.1",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    })  # fmt: skip
    return env


def _write_connection(flwr_home: Path, name: str, superlink: str, insecure: bool,
                      root_certificates: str | None) -> None:  # fmt: skip
    flwr_home.mkdir(parents=True, exist_ok=True)
    lines = ["[superlink]", f'default = "{name}"', "", f"[superlink.{name}]",
             f"address = {json.dumps(superlink)}"]  # fmt: skip
    if insecure:
        lines.append("insecure = true")
    elif root_certificates:
        lines.append(f"root-certificates = {json.dumps(str(root_certificates))}")
    (flwr_home / "config.toml").write_text("\n".join(lines) + "\n")


def _parse_address(superlink: str) -> tuple[str, int]:
    host, sep, port = str(superlink).rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError.bad("superlink", "an address HOST:PORT", superlink)
    return host.strip("[]"), int(port)


def _wait_for_port(superlink: str, timeout: float, processes: Sequence[subprocess.Popen] = ()):
    host, port = _parse_address(superlink)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return
        except OSError as exc:
            error = exc
        if any(p.poll() is not None for p in processes):
            raise BackendError(f"superlink: the Flower SuperLink at {superlink} exited early")
        if time.monotonic() > deadline:
            raise BackendError(
                f"superlink: no Flower SuperLink answers at {superlink} (tried for "
                f"{timeout:g} s: {error}); check the address and that flower-superlink runs"
            )
        time.sleep(0.2)


def run_flower_app(
    app_dir: str | os.PathLike,
    superlink: str,
    *,
    insecure: bool = True,
    root_certificates: str | os.PathLike | None = None,
    timeout: float = 600.0,
    connect_timeout: float = 10.0,
    flwr_home: str | os.PathLike | None = None,
) -> FlowerRunResult:
    """Submit the app in ``app_dir`` to the SuperLink at ``superlink`` with ``flwr run
    --stream``, wait for it, and read the result the ServerApp wrote to its ``result-dir``.

    An unreachable SuperLink raises :class:`~trustlab.errors.BackendError` naming
    ``superlink`` after ``connect_timeout`` seconds; a run longer than ``timeout`` seconds is
    stopped and raises BackendError naming ``timeout``. The result can only be read when the
    ``result-dir`` is on this machine (a loopback or shared-disk deployment).
    """
    app = Path(app_dir)
    if not (app / "pyproject.toml").is_file():
        raise InputError.bad("app_dir", "a Flower App directory (from write_flower_app)", str(app))
    if not insecure and root_certificates is None:
        raise InputError.bad("root_certificates", "a CA certificate file when insecure=False",
                             root_certificates)  # fmt: skip
    result_dir = _result_dir(app)
    _wait_for_port(superlink, connect_timeout)
    certificates = None if root_certificates is None else str(Path(root_certificates).resolve())
    with tempfile.TemporaryDirectory(prefix="flwr-home-") as scratch:
        home = Path(flwr_home) if flwr_home is not None else Path(scratch)
        _write_connection(home, "trustlab", superlink, insecure, certificates)
        started = time.perf_counter()
        output = _flwr_run(app, home, timeout)
    return _read_result(result_dir, time.perf_counter() - started, output)


def _result_dir(app: Path) -> Path:
    import tomllib

    config = tomllib.loads((app / "pyproject.toml").read_text())
    result = config.get("tool", {}).get("flwr", {}).get("app", {}).get("config", {})
    if not result.get("result-dir"):
        raise InputError.bad("app_dir", "an app whose run config sets result-dir", str(app))
    return Path(result["result-dir"])


def _flwr_run(app: Path, home: Path, timeout: float) -> str:
    command = [_executable("flwr"), "run", str(app), "trustlab", "--stream"]
    try:
        done = subprocess.run(command, env=_flower_env(home), capture_output=True, text=True,
                              timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        tail = exc.stdout or ""
        if isinstance(tail, bytes):  # TimeoutExpired keeps bytes even with text=True
            tail = tail.decode(errors="replace")
        raise BackendError(
            f"timeout: the Flower run did not finish within {timeout:g} s; last output:\n"
            f"{tail[-2000:]}"
        ) from None
    output = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        raise BackendError(f"flwr run failed (exit {done.returncode}):\n{output[-3000:]}")
    return output


def _read_result(result_dir: Path, wall: float, output: str) -> FlowerRunResult:
    meta_path, arrays_path = result_dir / RESULT_JSON, result_dir / RESULT_ARRAYS
    if not meta_path.is_file() or not arrays_path.is_file():
        raise BackendError(
            f"the Flower run ended without writing {meta_path} (the ServerApp failed, or the "
            f"SuperLink runs on another machine); its output:\n{output[-3000:]}"
        )
    meta = json.loads(meta_path.read_text())
    with np.load(arrays_path, allow_pickle=False) as data:
        weights = {k: data[k] for k in data.files}
    return FlowerRunResult(
        state=ProtocolState.from_dict(meta["state"]), weights=weights, nodes=meta["nodes"],
        seconds=float(meta["seconds"]), wall_seconds=wall, log=output,
    )  # fmt: skip


def _free_ports(count: int) -> list[int]:
    sockets, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    return ports


def _start(command: list[str], env: dict, log_path: Path) -> subprocess.Popen:
    handle = open(log_path, "wb")  # noqa: SIM115 - closed with the process in _stop
    process = subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT,
                               start_new_session=True)  # fmt: skip
    process.log_handle = handle
    return process


def _stop(processes: Sequence[subprocess.Popen]) -> None:
    """End the processes this module started, with their children (their own sessions)."""
    for p in processes:
        if p.poll() is None:
            with _suppress():
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in processes:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with _suppress():
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=5)
        p.log_handle.close()


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, ProcessLookupError | PermissionError)


def run_loopback(
    config: UEFLConfig | None = None,
    *,
    n_silos: int = 3,
    shift: str = "rotation",
    workdir: str | os.PathLike | None = None,
    timeout: float = 600.0,
    startup_timeout: float = 120.0,
) -> FlowerRunResult:
    """Start a SuperLink and ``n_silos`` SuperNodes on 127.0.0.1 (insecure, free ports), run
    the UEFL app on them with ``flwr run``, and stop every process again, errors included.

    The logs of every process and the app project stay in ``workdir`` (a new temporary
    directory by default).

    Examples
    --------
    >>> result = run_loopback(UEFLConfig(rounds=1, max_iterations=1), n_silos=2)  # doctest: +SKIP
    >>> result.rounds  # doctest: +SKIP
    1
    """
    cfg = config if config is not None else UEFLConfig()
    work = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="uefl-flower-"))
    work.mkdir(parents=True, exist_ok=True)
    app = write_flower_app(work / "app", cfg, n_silos=n_silos, shift=shift,
                           result_dir=work / "result", node_timeout=timeout)  # fmt: skip
    for stale in (work / "result" / RESULT_JSON, work / "result" / RESULT_ARRAYS):
        stale.unlink(missing_ok=True)
    home = work / "flwr-home"
    superlink_port, *node_ports = _free_ports(1 + n_silos)
    superlink = f"127.0.0.1:{superlink_port}"
    _write_connection(home, "trustlab", superlink, insecure=True, root_certificates=None)
    env = _flower_env(home)
    started = time.perf_counter()
    processes: list[subprocess.Popen] = []
    try:
        processes.append(_start(
            [_executable("flower-superlink"), "--insecure", "--host", "127.0.0.1",
             "--port", str(superlink_port), "--disable-runtime-dependency-installation"],
            env, work / "superlink.log",
        ))  # fmt: skip
        for i, port in enumerate(node_ports):
            processes.append(_start(
                [_executable("flower-supernode"), "--insecure", "--superlink", superlink,
                 "--host", "127.0.0.1", "--port", str(port),
                 "--node-config", f"partition-id={i} num-partitions={n_silos}"],
                env, work / f"supernode-{i}.log",
            ))  # fmt: skip
        _wait_for_port(superlink, startup_timeout, processes)
        output = _flwr_run(app, home, timeout)
        return _read_result(work / "result", time.perf_counter() - started, output)
    finally:
        _stop(processes)
