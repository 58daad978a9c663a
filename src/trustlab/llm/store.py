"""A resumable result store: SQLite rows keyed by (run, item), written as each result arrives.

Long evaluations (thousands of prompts through a model or an endpoint) crash, time out or get
interrupted. :class:`ResultStore` commits every result the moment it is computed, so a rerun of
the same ``run`` computes only what is missing: a crash or Ctrl-C loses at most the item that
was in progress.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._progress import check_progress
from trustlab._results import to_jsonable
from trustlab.errors import InputError

__all__ = ["ResultStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    run TEXT NOT NULL,
    item TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (run, item)
)
"""


class ResultStore:
    """Results keyed by (run, item) in a SQLite file, committed one by one.

    Parameters
    ----------
    path : str or os.PathLike
        The database file; it and its parent folders are created when missing. The file uses
        SQLite's write-ahead log, so readers never block the writer.

    Notes
    -----
    Item keys are strings or integers (they keep their type: ``1`` and ``"1"`` are different
    items; a numpy integer is the same item as its int). Values are anything JSON can hold
    (dicts, lists, strings, numbers, booleans, None); numpy scalars and arrays, and trustlab
    results, go through trustlab's one JSON converter (plain numbers and lists, a result's
    ``to_dict()``; a NaN or an infinity in a numpy array, a float32 or a float16 becomes None, so
    ``inf`` and ``-inf`` there come back alike, while a Python float or a ``np.float64``, a
    float itself, keeps NaN and infinity as JSON's ``NaN`` / ``Infinity``, which Python reads
    back). Reading returns the decoded JSON, so a tuple comes back as a list and a dict's keys
    as texts; a dict with two keys that become one text (``1`` and ``"1"``) is refused, as JSON
    would keep only the last.

    The store is safe to use from several threads: each thread gets its own connection.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "results.sqlite")
    >>> with ResultStore(path) as store:
    ...     squares = store.map("squares", range(4), lambda k: k * k)
    >>> squares
    {0: 0, 1: 1, 2: 4, 3: 9}
    >>> with ResultStore(path) as store:  # a rerun computes nothing
    ...     store.map("squares", range(4), lambda k: 1 / 0)
    {0: 0, 1: 1, 2: 4, 3: 9}
    """

    def __init__(self, path: str | os.PathLike):
        if not isinstance(path, (str, os.PathLike)) or str(path) in ("", ":memory:"):
            raise InputError.bad("path", "a file path (str or os.PathLike)", path)
        if "\0" in str(path):  # no file name holds one: pathlib raised a bare ValueError
            raise InputError.bad("path", "a file path without a NUL character", str(path))
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError.bad("path", "a file path, not a folder", str(path))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise InputError.bad(
                "path", "a file path in a folder (or one that can be created)", str(path)
            ) from None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        try:
            with self._connection() as conn:
                conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:  # an existing file that is not a SQLite database
            self.close()
            raise InputError.bad(
                "path", "a SQLite file or a new file path", f"{path} ({exc})"
            ) from None

    # -- connections -------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        if self._closed:
            raise InputError(f"the store {self.path} is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # one connection per thread; check_same_thread is off only so close() may close all
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            # WAL with synchronous=NORMAL survives a killed process (not a power cut) and is fast
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection the store opened (further use raises InputError)."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._closed = True

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    # -- single items ------------------------------------------------------------------------

    def put(self, run: str, item: str | int, value: Any) -> None:
        """Store ``value`` for (run, item), replacing any earlier value, and commit at once."""
        self._write(_check_run(run), _encode_key(item), _encode_value(value, run, item))

    def _write(self, run: str, key: str, encoded: str) -> None:
        conn = self._connection()
        with conn:  # commits on leaving the block
            conn.execute(
                # an upsert keeps the row (and its rowid, the order items() reads) of a replaced
                # item; INSERT OR REPLACE would delete it and append a new one
                "INSERT INTO results (run, item, value, created) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (run, item) DO UPDATE SET value = excluded.value, "
                "created = excluded.created",
                (run, key, encoded, time.time()),
            )

    def get(self, run: str, item: str | int, default: Any = None) -> Any:
        """The value stored for (run, item), or ``default`` when there is none."""
        row = (
            self._connection()
            .execute(
                "SELECT value FROM results WHERE run = ? AND item = ?",
                (_check_run(run), _encode_key(item)),
            )
            .fetchone()
        )
        return default if row is None else json.loads(row[0])

    def has(self, run: str, item: str | int) -> bool:
        """Whether (run, item) holds a value."""
        row = (
            self._connection()
            .execute(
                "SELECT 1 FROM results WHERE run = ? AND item = ?",
                (_check_run(run), _encode_key(item)),
            )
            .fetchone()
        )
        return row is not None

    # -- whole runs --------------------------------------------------------------------------

    def done(self, run: str) -> set[str | int]:
        """The item keys that ``run`` already holds."""
        rows = self._connection().execute(
            "SELECT item FROM results WHERE run = ?", (_check_run(run),)
        )
        return {json.loads(key) for (key,) in rows}

    def items(self, run: str) -> dict[str | int, Any]:
        """Every (item -> value) of ``run``, in the order they were first written."""
        rows = self._connection().execute(
            "SELECT item, value FROM results WHERE run = ? ORDER BY rowid", (_check_run(run),)
        )
        return {json.loads(key): json.loads(value) for key, value in rows}

    def runs(self) -> list[str]:
        """The names of the runs in the store, sorted."""
        rows = self._connection().execute("SELECT DISTINCT run FROM results ORDER BY run")
        return [run for (run,) in rows]

    def clear(self, run: str) -> int:
        """Delete every item of ``run``; return how many were deleted."""
        conn = self._connection()
        with conn:
            cursor = conn.execute("DELETE FROM results WHERE run = ?", (_check_run(run),))
        return cursor.rowcount

    def map(
        self,
        run: str,
        items: Mapping[str | int, Any] | Iterable[str | int],
        fn: Callable[[Any], Any],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str | int, Any]:
        """Compute ``fn`` for the items ``run`` does not hold yet, storing each result at once.

        Parameters
        ----------
        run : str
            The run's name; rerunning with the same name resumes it.
        items : mapping or iterable
            A mapping ``key -> input`` (``fn(input)`` is stored under ``key``) or an iterable of
            keys (``fn(key)`` is stored under ``key``). Keys are strings or integers.
        fn : callable
            Computes one result; it must return a JSON-serialisable value.
        progress : callable, optional
            Called as ``progress(n_done, n_total)`` once before the first computation and after
            each stored result.

        Returns
        -------
        dict
            ``key -> value`` for every requested key, in the order of ``items``, as stored (the
            decoded JSON), whether computed now or earlier.

        Notes
        -----
        Items are computed one at a time in the calling thread. An exception (or Ctrl-C) from
        ``fn`` propagates unchanged; everything finished before it is already committed.
        """
        run = _check_run(run)
        if not callable(fn):
            raise InputError.bad("fn", "a callable", fn)
        check_progress(progress, "a callable (n_done, n_total) or None")
        inputs = _as_inputs(items)
        stored = self.items(run)
        results = {key: stored[key] for key in inputs if key in stored}
        n_done = len(results)
        if progress is not None:
            progress(n_done, len(inputs))
        for key, arg in inputs.items():
            if key in results:
                continue
            encoded = _encode_value(fn(arg), run, key)
            self._write(run, _encode_key(key), encoded)
            results[key] = json.loads(encoded)
            n_done += 1
            if progress is not None:
                progress(n_done, len(inputs))
        return {key: results[key] for key in inputs}


def _check_run(run: Any) -> str:
    if not isinstance(run, str) or not run:
        raise InputError.bad("run", "a non-empty string", run)
    return run


def _encode_key(item: Any) -> str:
    # JSON text keeps the key's type: 1 is stored as '1', "1" as '"1"'
    return json.dumps(_as_key(item))


def _as_key(item: Any) -> str | int:
    """A string or integer key; a numpy integer (``np.arange``'s items) is its int."""
    if isinstance(item, np.integer):
        return int(item)
    if isinstance(item, bool) or not isinstance(item, (str, int)):
        raise InputError.bad("item", "a string or an integer key", item)
    return item


def _as_inputs(items: Any) -> dict[str | int, Any]:
    """``key -> argument of fn`` from a mapping or an iterable of keys (duplicates dropped)."""
    if isinstance(items, Mapping):
        pairs = list(items.items())
    elif isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise InputError.bad("items", "a mapping key -> input or an iterable of keys", items)
    else:
        pairs = [(key, key) for key in items]
    return {_as_key(key): arg for key, arg in pairs}


def _encode_value(value: Any, run: str, item: Any) -> str:
    try:
        encoded = json.dumps(value, default=_convert)
        # JSON keys are texts: {1: "a", "1": "b"} would be written with "1" twice and read
        # back as {"1": "b"}, one value silently lost
        json.loads(encoded, object_pairs_hook=_distinct_keys)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"value for run {run!r}, item {item!r}: expected a JSON-serialisable value "
            f"(dicts, lists, strings, numbers, booleans, None), got {type(value).__name__} "
            f"({exc})",
            argument="value",
        ) from None
    return encoded


def _distinct_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        twice = sorted({key for key, _ in pairs if key in seen or seen.add(key)})
        raise ValueError(f"keys that become the same JSON text: {', '.join(map(repr, twice))}")
    return out


def _convert(obj: Any) -> Any:
    """What JSON does not hold natively (numpy values, results) through trustlab's converter.

    Sets are refused rather than turned into lists: they would not come back as they went in.
    """
    if isinstance(obj, (set, frozenset)):
        raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
    return to_jsonable(obj)
