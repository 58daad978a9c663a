"""An append-only JSONL checkpoint of a dataset certification, so an interrupted run resumes.

Line 1 is a header naming the run (the model, data, noise and sampling settings and the random
entropy); every later line is one point: its index, its selected top class and its estimation
counts. A line is written whole, flushed and synced before the work it records counts as done,
so a crash or Ctrl-C loses at most the chunks in flight; a torn last line (a crash mid-write) is
dropped when the file is reopened. Counts, not certificates, are stored: alpha and the cost
matrix act only after sampling, so a finished checkpoint can be re-certified under others.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from trustlab.errors import InputError

__all__ = ["CheckpointStore"]

FORMAT = "trustlab.robustness.certify_dataset"
VERSION = 1
# How a refused resume names what differs (the header's keys are hashes and the seed's entropy).
SETTING_NAMES = {
    "data_sha256": "the data",
    "model_sha256": "the model",
    "num_classes": "the number of classes",
    "entropy": "the seed",
}


class CheckpointStore:
    """Records of finished points of one run, kept in a JSONL file.

    Parameters
    ----------
    path : path-like
        The file; created with ``header`` when the first points are recorded (so a run refused
        before any work leaves nothing behind).
    header : dict
        What identifies the run. An existing file with another header is refused, so a
        checkpoint is never mixed with another model's, data's or seed's points.
    """

    def __init__(self, path: str | os.PathLike, header: dict[str, Any]):
        self.path = self.check_path(path)
        self.header = {"format": FORMAT, "version": VERSION, **header}
        self.records: dict[int, tuple[int, list[int]]] = {}
        self._created = self.path.exists() and self._load()

    def _create(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(self.header, sort_keys=True) + "\n")
                _sync(handle)
        except OSError as exc:  # a folder that cannot be created or written (a raw OSError)
            raise InputError(
                f"checkpoint: expected a file that can be written, got {self.path} ({exc})",
                argument="checkpoint",
            ) from None

    @staticmethod
    def check_path(path: str | os.PathLike) -> Path:
        """``path`` as a Path, refused (naming ``checkpoint``) when something other than a file
        is there: a folder was a raw IsADirectoryError, also when ``fresh`` unlinked it."""
        path = Path(path)
        if path.exists() and not path.is_file():
            raise InputError.bad("checkpoint", "a file (the run's JSONL checkpoint)", str(path))
        folder = path.parent  # a file where its folder goes: refused now, not after sampling
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise InputError.bad(
                "checkpoint", "a path inside folders", f"{path} ({folder} is a file)"
            )
        return path

    @staticmethod
    def stored_entropy(path: str | os.PathLike) -> int | None:
        """The random entropy recorded in an existing checkpoint, or None."""
        path = CheckpointStore.check_path(path)
        if not path.exists() or path.stat().st_size == 0:
            return None
        with open(path, "rb") as handle:  # bytes: another (binary) file is refused by _load
            first = handle.readline()
        try:
            return int(json.loads(first)["entropy"])
        except (ValueError, KeyError, TypeError):  # UnicodeDecodeError is a ValueError
            return None

    def _load(self) -> bool:
        """Read the records of an existing file; False when it holds no whole header."""
        with open(self.path, "rb") as handle:
            content = handle.read()
        *complete, _torn = content.split(b"\n")  # only lines ending in a newline are whole
        if not complete:  # empty, or the header itself was torn: nothing was recorded yet
            return False
        try:
            stored = json.loads(complete[0])
        except ValueError:
            stored = None
        if not isinstance(stored, dict) or stored.get("format") != FORMAT:
            raise InputError.bad(
                "checkpoint", f"a trustlab certification checkpoint at {self.path}", "another file"
            )
        if stored != self.header:
            changed = sorted(
                SETTING_NAMES.get(key, key)
                for key in set(stored) | set(self.header)
                if stored.get(key) != self.header.get(key)
            )
            raise InputError(
                f"checkpoint: expected a checkpoint of this run at {self.path}, got one written "
                f"with other settings ({', '.join(changed)}); delete it or choose another path",
                argument="checkpoint",
            )
        whole = len(complete[0]) + 1
        for line in complete[1:]:
            try:
                record = json.loads(line)
                index, top = int(record["i"]), int(record["top"])
                counts = [int(c) for c in record["counts"]]
            except (ValueError, KeyError, TypeError):
                break  # a damaged line: it and everything after it are redone
            self.records[index] = (top, counts)
            whole += len(line) + 1
        if whole < len(content):
            with open(self.path, "r+b") as handle:
                handle.truncate(whole)
                _sync(handle)
        return True

    def append(self, indices, tops, counts) -> None:
        """Record finished points (their indices, top classes and count rows)."""
        if not self._created:
            self._create()
            self._created = True
        lines = []
        for index, top, row in zip(indices, tops, counts, strict=True):
            self.records[int(index)] = (int(top), [int(c) for c in row])
            lines.append(json.dumps({"i": int(index), "top": int(top), "counts": row.tolist()}))
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
            _sync(handle)


def _sync(handle) -> None:
    handle.flush()
    os.fsync(handle.fileno())
