"""Deploying the UEFL Flower apps: the Flower App project, SuperLink and SuperNode processes,
connections and ports, and the result a run leaves.

:func:`write_flower_app` writes the Flower App project that ``flwr run`` submits (its
components are the apps of :mod:`trustlab.federated.flower`); :func:`run_flower_app` submits it
to a SuperLink and reads the result; :func:`run_loopback` starts a SuperLink and one SuperNode
per silo on 127.0.0.1 and runs the app on them (tests, benchmarks, a demo), stopping every
process it started, errors included.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_in_range, check_positive_int
from trustlab._renamed import renamed_keyword
from trustlab._results import Result, check_output_dir, internal_field, output_dir, write_atomic
from trustlab.errors import BackendError, ConfigError, InputError
from trustlab.federated.flower import RESULT_ARRAYS, RESULT_JSON
from trustlab.federated.model import check_model_spec
from trustlab.federated.protocol import ProtocolState
from trustlab.federated.results import round_counts, rounds_text
from trustlab.federated.silos import DATASETS, SHIFT_PRESETS
from trustlab.federated.uefl import UEFLConfig

__all__ = [
    "FlowerApp",
    "FlowerRunResult",
    "write_flower_app",
    "launch_commands",
    "run_flower_app",
    "run_loopback",
]

APP_NAME = "trustlab-uefl"
DEFAULT_PORT = 9093
# The model has one output per class: check_silos's bound for own labels (10,000 classes)
_MAX_CLASSES = 10_000


@dataclass(frozen=True)
class FlowerRunResult(Result):
    """The end of a Flower run: the protocol state (history, book indices, threshold), the
    final shared arrays, the node -> silo map and the wall time (of the ServerApp loop, and of
    the whole launch when started by :func:`run_loopback`)."""

    state: ProtocolState
    weights: dict[str, np.ndarray] = internal_field()
    nodes: dict[str, int]
    seconds: float
    wall_seconds: float
    log: str = internal_field(default="")

    @property
    def rounds(self) -> int:
        """Federated rounds run."""
        return self.state.round

    def _dict_items(self) -> dict[str, Any]:
        last = self.state.history[-1] if self.state.history else {}
        return {
            "rounds": self.state.round,
            "extension_rounds": round_counts(self.state.round, self.state.extensions)[1],
            "book_idx": self.state.book_idx,
            "threshold": self.state.threshold,
            "extensions": self.state.extensions,
            "final_entropy": last.get("entropy"),
            "final_accuracy": last.get("accuracy"),
            "nodes": self.nodes,
            "seconds": self.seconds,
            "wall_seconds": self.wall_seconds,
        }

    def summary(self) -> str:
        d = self.to_dict()
        rounds = rounds_text(d["rounds"], d["extensions"])
        lines = [f"Flower UEFL run: {rounds} over {len(self.nodes)} SuperNodes in "
                 f"{d['wall_seconds']:.1f} s (server loop {d['seconds']:.1f} s)",
                 f"  final book indices: {d['book_idx']}"]  # fmt: skip
        if d["final_accuracy"] is not None:
            lines.append("  final accuracy: " + ", ".join(f"{a:.3f}" for a in d["final_accuracy"]))
            lines.append("  final entropy:  " + ", ".join(f"{h:.3f}" for h in d["final_entropy"]))
        return "\n".join(lines)


@dataclass(frozen=True)
class FlowerApp(Result):
    """A Flower App project written by :func:`write_flower_app`: its directory, the number of
    SuperNodes (silos) it expects, and the shell commands that launch it on one machine with the
    SuperLink on ``port``. Usable wherever a path is (``os.fspath(app)`` is its directory)."""

    app_dir: Path
    n_silos: int
    port: int = DEFAULT_PORT

    _dict_extras = ("commands",)

    @property
    def pyproject(self) -> Path:
        """The project file ``flwr run`` reads."""
        return self.app_dir / "pyproject.toml"

    @property
    def commands(self) -> str:
        """The launch commands on one machine (insecure loopback), as text."""
        return launch_commands(self.n_silos, str(self.app_dir), self.port)

    def summary(self) -> str:
        return f"Flower App written to {self.app_dir}\nLaunch on one machine:\n{self.commands}"

    def __fspath__(self) -> str:
        return str(self.app_dir)


@renamed_keyword("num_features", "n_features")
@renamed_keyword("num_classes", "n_classes")
def write_flower_app(
    directory: str | os.PathLike,
    config: UEFLConfig | None = None,
    *,
    n_silos: int = 3,
    shift: str = "rotation",
    data: str = "digits",
    result_dir: str | os.PathLike | None = None,
    n_features: int | None = None,
    n_classes: int = 10,
    node_timeout: float = 600.0,
    port: int = DEFAULT_PORT,
) -> FlowerApp:
    """Write the Flower App project (a ``pyproject.toml``) that ``flwr run`` submits.

    The components are ``trustlab.federated.flower:server_app`` and ``:client_app``, so every
    machine running a SuperLink or SuperNode needs trustlab with the ``federated`` extra installed.

    Parameters
    ----------
    directory : path
        The project directory (created if needed).
    config : UEFLConfig, optional
        The protocol's settings; the run config holds every field.
    n_silos : int
        SuperNodes (one silo each) the ServerApp waits for; at least 2.
    shift, data : str
        Shift preset and data set ("digits" or "mnist") of the silos that nodes without a
        ``data-path`` build.
    result_dir : path, optional
        Where the ServerApp writes ``flower_result.json`` and ``flower_weights.npz`` (on the
        SuperLink's machine); nothing is written without it.
    n_features, n_classes : int
        The model's input and output sizes; ``n_features`` defaults to the data set's: 64 for
        digits, 196 for MNIST at 14 x 14. ``n_classes`` is 2 to 10,000 (the bound
        ``check_silos`` puts on own labels). ``num_features=`` and ``num_classes=`` are their
        deprecated names (a FutureWarning, for one release); the run config keeps its keys
        ``num-features`` and ``num-classes``, which apps already written use.
    node_timeout : float
        Seconds (positive and finite) the ServerApp waits for nodes and for each round's replies.
    port : int
        The SuperLink port of the launch commands in the result (the app does not depend on it).

    Returns
    -------
    FlowerApp
        The project directory, the expected nodes and the launch commands.

    Examples
    --------
    >>> import tempfile
    >>> app = write_flower_app(tempfile.mkdtemp(), n_silos=2)
    >>> app.pyproject.is_file(), app.commands.count("flower-supernode")
    (True, 2)
    """
    cfg = config if config is not None else UEFLConfig()
    if not isinstance(cfg, UEFLConfig):
        raise InputError.bad("config", "a UEFLConfig", cfg)
    check_choice(shift, "shift", SHIFT_PRESETS)
    check_choice(data, "data", DATASETS)
    n_silos, port = _check_nodes(n_silos, port)
    if n_features is None:
        n_features = 64 if data == "digits" else 196
    n_features = check_positive_int(n_features, "n_features")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    if n_classes > _MAX_CLASSES:  # 1e10 was written, and every node then failed allocating it
        raise InputError.bad(
            "n_classes", f"an integer in [2, {_MAX_CLASSES:,}] (one model output per class)",
            n_classes,
        )  # fmt: skip
    check_model_spec(cfg.model_spec(n_features, n_classes))  # the ServerApp builds this model
    # NaN never timed out (the ServerApp waited for nodes for good); -5 or 0 failed at once.
    node_timeout = check_in_range(node_timeout, "node_timeout", 0, np.inf, low_open=True,
                                  high_open=True)  # fmt: skip
    # result_dir: a file there failed the ServerApp after the whole run (check_output_dir)
    rdir = "" if result_dir is None else str(check_output_dir(result_dir, "result_dir").resolve())
    if rdir != rdir.encode("utf-8", "replace").decode():  # byte 0xff: a raw UnicodeEncodeError
        raise InputError.bad("result_dir", "a path that is valid UTF-8 (pyproject.toml is UTF-8)",
                             result_dir)  # fmt: skip
    run_config: dict[str, Any] = {k.replace("_", "-"): v for k, v in cfg.to_dict().items()}
    run_config.update({
        "num-silos": n_silos, "shift": shift, "data": data, "num-features": int(n_features),
        "num-classes": int(n_classes), "node-timeout": float(node_timeout),
        "result-dir": rdir,
    })  # fmt: skip
    for key, value in run_config.items():  # flwr run failed: "ValueError: Value out of range"
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise InputError.bad(f"config.{key.replace('-', '_')}", "an integer below 2**63 "
                                 "(a Flower run config holds 64-bit integers)", value)  # fmt: skip
    lines = [
        "# A Flower App running trustlab's UEFL; written by trustlab.federated.flower_launch.",
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
    app = output_dir(directory, "directory")
    write_atomic(app / "pyproject.toml", "\n".join(lines) + "\n")  # never half (--out's mark)
    return FlowerApp(app, n_silos, port)


def _check_nodes(n_silos: Any, port: Any) -> tuple[int, int]:
    """At least two SuperNodes, and a SuperLink port that leaves room for theirs."""
    n_silos = check_positive_int(n_silos, "n_silos", minimum=2)
    if check_positive_int(port, "port") > 65535 - n_silos:  # the SuperNodes take the next ports
        raise InputError.bad("port", f"a TCP port in [1, {65535 - n_silos}] ({n_silos} "
                             "SuperNode ports follow it)", port)  # fmt: skip
    return n_silos, port


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")  # no surrogates


def launch_commands(
    n_silos: int = 3, app_dir: str | os.PathLike = "uefl-app", port: int = DEFAULT_PORT
) -> str:
    """The shell commands that run the app on one machine (insecure loopback), as text.

    Examples
    --------
    >>> print(launch_commands(2, "uefl-app").splitlines()[0])
    flower-superlink --insecure --port 9093 --disable-runtime-dependency-installation
    """
    # port 70000, -5 or True, and 0 SuperNodes, printed commands that failed when pasted
    n_silos, port = _check_nodes(n_silos, port)
    lines = [f"flower-superlink --insecure --port {port} --disable-runtime-dependency-installation"]
    lines += [
        f"flower-supernode --insecure --superlink 127.0.0.1:{port} --port {port + 1 + i} "
        f'--node-config "partition-id={i} num-partitions={n_silos}"'
        for i in range(n_silos)
    ]
    lines.append(f"# with [superlink.loopback] address = \"127.0.0.1:{port}\", insecure = true "
                 "in $FLWR_HOME/config.toml:")  # fmt: skip
    # Quoted: a directory with a space or quote printed a command that failed when pasted.
    lines.append(f"flwr run {shlex.quote(os.fspath(app_dir))} loopback --stream")
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
             f"address = {_toml_value(superlink)}"]  # fmt: skip
    if insecure:
        lines.append("insecure = true")
    elif root_certificates:
        lines.append(f"root-certificates = {_toml_value(str(root_certificates))}")
    (flwr_home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


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
    app_dir: str | os.PathLike | FlowerApp,
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

    Parameters
    ----------
    app_dir : path or FlowerApp
        A project written by :func:`write_flower_app` with a ``result_dir``; the result files
        an earlier run left there are deleted before the run.
    superlink : str
        The SuperLink's ``HOST:PORT``.
    insecure, root_certificates
        Plain connection (loopback), or TLS verified with the CA certificate file.
    timeout, connect_timeout : float
        Seconds for the whole run, and for the SuperLink to answer at all.
    flwr_home : path, optional
        Where the ``flwr`` connection file goes (a temporary directory by default).

    Returns
    -------
    FlowerRunResult

    Raises
    ------
    BackendError
        Naming ``superlink`` when nothing answers there within ``connect_timeout`` seconds,
        ``timeout`` when the run is stopped after ``timeout`` seconds, or the run's output when
        it fails. The result can only be read when the ``result-dir`` is on this machine (a
        loopback or shared-disk deployment).
    """
    _check_seconds(timeout=timeout, connect_timeout=connect_timeout)
    app = Path(app_dir)
    if not (app / "pyproject.toml").is_file():
        raise InputError.bad("app_dir", "a Flower App directory (from write_flower_app)", str(app))
    if not insecure and root_certificates is None:
        raise InputError.bad("root_certificates", "a CA certificate file when insecure=False",
                             root_certificates)  # fmt: skip
    if not insecure and not Path(root_certificates).is_file():  # flwr run failed after connecting
        raise InputError.bad("root_certificates", "an existing CA certificate file",
                             str(root_certificates))  # fmt: skip
    if flwr_home is not None:  # a file there: a raw FileExistsError, after the connection wait
        check_output_dir(flwr_home, "flwr_home")
    result_dir = _result_dir(app)
    _wait_for_port(superlink, connect_timeout)
    # `flwr run --stream` exits 0 even when the ServerApp fails: a result left by an earlier
    # run of this app must not be read as this run's.
    for stale in (result_dir / RESULT_JSON, result_dir / RESULT_ARRAYS):
        stale.unlink(missing_ok=True)
    certificates = None if root_certificates is None else str(Path(root_certificates).resolve())
    with tempfile.TemporaryDirectory(prefix="flwr-home-") as scratch:
        home = Path(flwr_home) if flwr_home is not None else Path(scratch)
        _write_connection(home, "trustlab", superlink, insecure, certificates)
        started = time.perf_counter()
        output = _flwr_run(app, home, timeout)
    return _read_result(result_dir, time.perf_counter() - started, output)


def _check_seconds(**seconds: Any) -> None:
    """Waits must be positive and finite: a NaN connect_timeout waited for a SuperLink for good
    (NaN never passes a deadline), and run_loopback's timeout=-5 was refused as node_timeout."""
    for name, value in seconds.items():
        check_in_range(value, name, 0, np.inf, low_open=True, high_open=True)


def _result_dir(app: Path) -> Path:
    import tomllib

    config = tomllib.loads((app / "pyproject.toml").read_text(encoding="utf-8"))
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
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in processes:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=5)
        p.log_handle.close()


@contextlib.contextmanager
def _terminate_runs_cleanup():
    """SIGTERM raises SystemExit while the block runs, so its ``finally`` stops the Flower
    processes: they live in sessions of their own, and a terminated Python (``timeout``, a test
    worker ended mid-run) left the SuperLink and SuperNodes running for good. Only in the main
    thread and where SIGTERM has its default action."""
    import threading

    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def _exit(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


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

    Parameters
    ----------
    config : UEFLConfig, optional
        The protocol's settings.
    n_silos, shift
        SuperNodes (2 to 40, one digit silo each) and shift preset, as in :func:`write_flower_app`.
    workdir : path, optional
        Keeps the app project, the result and every process's log (a new temporary directory
        by default).
    timeout, startup_timeout : float
        Seconds for the run, and for the SuperLink to start.

    Returns
    -------
    FlowerRunResult
        Its ``wall_seconds`` include starting the processes.

    Examples
    --------
    >>> result = run_loopback(UEFLConfig(rounds=1, max_iterations=1), n_silos=2)  # doctest: +SKIP
    >>> result.rounds  # doctest: +SKIP
    1
    """
    _check_seconds(timeout=timeout, startup_timeout=startup_timeout)
    if check_positive_int(n_silos, "n_silos", minimum=2) > 40:  # np.int64(41) passed isinstance
        raise InputError.bad("n_silos", "at most 40 SuperNodes (one digit silo each)", n_silos)
    cfg = config if config is not None else UEFLConfig()
    work = output_dir(workdir, "workdir") if workdir is not None else None  # a file: InputError
    work = work or Path(tempfile.mkdtemp(prefix="uefl-flower-"))
    try:
        app = write_flower_app(work / "app", cfg, n_silos=n_silos, shift=shift,
                               result_dir=work / "result", node_timeout=timeout).app_dir  # fmt: skip
    except InputError:  # refused settings left an empty temporary folder behind, call by call
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        raise
    for stale in (work / "result" / RESULT_JSON, work / "result" / RESULT_ARRAYS):
        stale.unlink(missing_ok=True)
    home = work / "flwr-home"
    superlink_port, *node_ports = _free_ports(1 + n_silos)
    superlink = f"127.0.0.1:{superlink_port}"
    _write_connection(home, "trustlab", superlink, insecure=True, root_certificates=None)
    env = _flower_env(home)
    started = time.perf_counter()
    processes: list[subprocess.Popen] = []
    with _terminate_runs_cleanup():
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
