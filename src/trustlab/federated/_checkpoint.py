"""The checkpoint of a UEFL simulation, written after every round so an interrupted run resumes.

``checkpoint.json`` holds a fingerprint of the settings and silos, the finished runs' protocol
states and the current method's state; the ``checkpoint-<n>.npz`` it names holds the arrays
(global arrays, every silo's codebooks, the finished runs' final arrays).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._results import check_output_dir, json_text, write_atomic
from trustlab.errors import InputError
from trustlab.federated.protocol import InProcessEngine, ProtocolDriver, ProtocolState
from trustlab.federated.results import MethodRun
from trustlab.federated.silos import Silo
from trustlab.federated.uefl import SiloState, UEFLConfig

__all__ = ["Checkpoint", "fingerprint"]

_VERSION = 1


def fingerprint(config: UEFLConfig, silos: Sequence[Silo], baselines: Sequence[str]) -> str:
    """A digest of everything a run depends on: settings, baselines (in any order: each method
    runs on its own) and the silos' data."""
    digest = hashlib.sha256(json.dumps([config.to_dict(), sorted(baselines)]).encode())
    for silo in silos:
        for part in (silo.X_train, silo.y_train, silo.X_test, silo.y_test):
            digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()


class Checkpoint:
    """checkpoint.json (protocol states, finished runs) + checkpoint-<n>.npz (arrays), replaced
    atomically after every round; a ``directory`` of None keeps nothing."""

    def __init__(
        self,
        directory: str | os.PathLike | None,
        fingerprint: str,
        baselines: Sequence[str],
        *,
        fresh: bool = False,
    ):
        """``fresh``: delete a checkpoint already in ``directory`` instead of resuming it."""
        self.directory = None if directory is None else check_output_dir(directory, "checkpoint")
        self.fingerprint = fingerprint
        self.baselines = tuple(baselines)
        self.meta: dict[str, Any] = {"version": _VERSION, "fingerprint": fingerprint,
                                     "generation": 0, "completed": {}, "current": None}  # fmt: skip
        self.arrays: dict[str, np.ndarray] = {}
        if fresh and self.directory is not None and self.directory.is_dir():
            for old in [
                self.directory / "checkpoint.json",
                *self.directory.glob("checkpoint-*.npz"),
            ]:
                old.unlink(missing_ok=True)
        if self.directory is not None and (self.directory / "checkpoint.json").is_file():
            self._load()

    def _load(self) -> None:
        try:
            meta = json.loads((self.directory / "checkpoint.json").read_text())
            with np.load(self.directory / meta["arrays"], allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            raise InputError.bad("checkpoint", f"a readable checkpoint in {self.directory}",
                                 str(exc)) from None  # fmt: skip
        if meta.get("fingerprint") != self.fingerprint:
            raise InputError(
                f"checkpoint: expected a checkpoint of the same silos and settings in "
                f"{self.directory}, got one written with other data or settings; delete it or "
                "choose another directory",
                argument="checkpoint",
            )
        self.meta, self.arrays = meta, arrays

    def completed(self, name: str) -> MethodRun | None:
        """The finished run of method ``name``, or None."""
        entry = self.meta["completed"].get(name)
        if entry is None:
            return None
        weights = _under(self.arrays, f"{name}/final/")
        return MethodRun.from_protocol(name, ProtocolState.from_dict(entry), weights)

    def restore(self, name: str, driver: ProtocolDriver, engine: InProcessEngine) -> bool:
        """Put the interrupted run of ``name`` back into the driver and engine; whether there
        was one."""
        current = self.meta.get("current")
        if not current or current["method"] != name:
            return False
        driver.state = ProtocolState.from_dict(current["state"])
        driver.arrays = _under(self.arrays, f"{name}/global/")
        for i, silo_meta in enumerate(current["silos"]):
            books = _under(self.arrays, f"{name}/silo{i}/")
            engine.states[i] = SiloState(books, silo_meta["book_idx"])
        return True

    def save_progress(self, name: str, driver: ProtocolDriver, engine: InProcessEngine) -> None:
        """Record the state of the running method after a round."""
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

    def save_completed(self, name: str, run: MethodRun) -> None:
        """Record a finished run and drop the running state."""
        if self.directory is None:
            return
        self.meta["completed"][name] = run.to_protocol().to_dict()
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
        write_atomic(self.directory / "checkpoint.json", json_text(self.meta))
        for old in self.directory.glob("checkpoint-*.npz"):
            if old.name != name:
                old.unlink(missing_ok=True)
        self.arrays = arrays


def _under(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays whose names start with ``prefix``, without it."""
    return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
