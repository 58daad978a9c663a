"""The black-box DSI mechanism: leave-one-group-out runs of any function, then calibrated noise."""

from __future__ import annotations

import hashlib
import json
import os
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import as_1d, as_float_array, check_callable, check_n_jobs
from trustlab._labels import sorted_unique
from trustlab._progress import check_progress
from trustlab._results import write_atomic
from trustlab.errors import InputError
from trustlab.privacy import _solver
from trustlab.privacy.calibration import calibrate
from trustlab.privacy.dsi import check_magnitude, check_solver_options

__all__ = ["DSIMechanism"]


class DSIMechanism(BaseEstimator):
    """Black-box DSI release of ``fn(data)`` protecting every group of records.

    ``fit(data, groups)`` runs ``fn`` on the full data (twice: a random ``fn`` is refused) and
    once with each group left out, forms the differences ``fn(U) - fn(U without group g)``, solves
    :func:`~trustlab.privacy.optimal_gaussian_covariance` and calibrates the multiplier;
    ``release`` adds ``noise_multiplier * N(0, Sigma)`` to ``fn(U)``. The output may be model
    parameters, predictions or any fixed-shape array.

    Parameters
    ----------
    fn : callable
        ``fn(subset) -> array-like`` of a fixed shape; deterministic (the same subset gives the
        same output), or the differences measure its randomness, not the data: two runs on the
        full data that differ by more than 1e-6 of the smallest group difference are refused
        (randomness the second run repeats, e.g. a cache of fn's results, is not seen).
        An exception ``fn`` raises gets a note naming the subset it ran on.
    epsilon, delta : float
        The DSI guarantee per group.
    steps : int, default 1
        Number of releases the guarantee must cover (see :func:`~trustlab.privacy.calibrate`).
    accountant : {"exact", "paper"}, default "exact"
    max_iter, tol :
        Passed to :func:`~trustlab.privacy.optimal_gaussian_covariance`.
    n_jobs : int, optional
        joblib workers for the ``n_groups + 2`` runs of ``fn`` (None: 1, -1: every core).

    Attributes
    ----------
    output_ : ndarray
        ``fn(data)``, the noiseless output.
    differences_ : ndarray of shape (n_groups, d)
        One row per group, flattened.
    group_labels_ : ndarray
        The group labels, in the order of ``differences_``.
    constrained_ : ndarray of bool
        False for groups whose removal does not change the output (or repeats another group's
        difference): their constraint holds for any Sigma and is left out of the solve.
    covariance_ : DSICovariance
    calibration_ : NoiseCalibration

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.privacy import DSIMechanism
    >>> x = np.arange(12.0).reshape(6, 2)
    >>> mech = DSIMechanism(lambda rows: rows.mean(axis=0), epsilon=2.0, delta=1e-5)
    >>> mech.fit(x, groups=[0, 0, 1, 1, 2, 2]).release(random_state=0).shape
    (2,)
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        *,
        epsilon: float,
        delta: float,
        steps: int = 1,
        accountant: str = "exact",
        max_iter: int = 1000,
        tol: float = 1e-7,
        n_jobs: int | None = None,
    ):
        self.fn = fn
        self.epsilon = epsilon
        self.delta = delta
        self.steps = steps
        self.accountant = accountant
        self.max_iter = max_iter
        self.tol = tol
        self.n_jobs = n_jobs

    def fit(
        self,
        data: Any,
        groups: Any,
        *,
        progress: Callable[[int, int], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
    ) -> DSIMechanism:
        """Run ``fn`` on the data (twice) and on each leave-one-group-out subset, then solve.

        Parameters
        ----------
        data : array-like, DataFrame, SciPy sparse matrix, or tuple of them
            The records, indexed by row. A tuple ``(X, y, ...)`` is subset element-wise.
        groups : array-like of shape (n_samples,)
            The group of each record; each distinct value is one reference set (its removal).
            Give every record its own label to protect single records.
        progress : callable, optional
            Called as ``progress(done, total)`` with the runs of ``fn`` finished out of
            ``n_groups + 2``: first (once the inputs are checked) with those ``checkpoint``
            already holds, then after each run.
        checkpoint : path, optional
            A folder keeping each finished run's output (one ``.npy`` file, written whole
            before the run counts as done), so that a fit stopped by a crash or Ctrl-C and
            rerun with the same folder runs only the missing subsets (the two runs on the full
            data are reused only together) and gives the same result as an uninterrupted fit.
            The folder records the groups, each subset's size, a hash of the data, fn's name
            and a hash of fn's code (its bytecode, names and constants, not its file or line;
            its defaults and closure values that are numbers, text, arrays, containers of only
            these, or, by name, functions): a rerun with other data or groups, or with an
            ``fn`` of the same name but other code, is refused. Not seen: globals or object
            state ``fn`` reads (other default or closure objects count by their type: a cache
            object ``fn`` fills still resumes; a list or dict of numbers it appends to counts
            by value, so a rerun in the same session after Ctrl-C is refused), and the code of
            a callable that is not a Python function (a
            ``functools.partial``, a callable object): resume with the same ``fn``, or delete
            the folder to start afresh. It is kept after the fit.

        Returns
        -------
        self
        """
        check_callable(self.fn, "fn")
        check_progress(progress, "a callable")
        calibration = calibrate(self.epsilon, self.delta, self.steps, self.accountant)
        max_iter, tol = check_solver_options(self.max_iter, self.tol)
        n_jobs = check_n_jobs(self.n_jobs)
        labels = as_1d(groups, "groups")
        n_samples = _length_of(data)
        if labels.size != n_samples:
            raise InputError.bad("groups", f"one label per record ({n_samples})", labels)
        group_labels = sorted_unique(labels, "groups")
        masks = [labels != g for g in group_labels]
        # an error on a subset names it: fn(data) itself may be fine (a group holding a class)
        names = ["fn(data)", "fn(data) run a second time"] + [
            f"fn(data without group {g!r}, {int(mask.sum())} records)"
            for g, mask in zip(group_labels.tolist(), masks, strict=True)
        ]
        store = None
        if checkpoint is not None:
            header = _run_header(self.fn, data, group_labels, masks)
            store = _RunStore(checkpoint, header)
        # fn(data) twice: a random fn would make the differences measure its randomness
        outputs = _run_all(self.fn, data, [None, None, *masks], names, n_jobs, store, progress)
        full = outputs[0].ravel()
        differences = np.stack([full - out.ravel() for out in outputs[2:]])
        constrained = _informative_rows(differences)
        _check_deterministic(full, outputs[1].ravel(), differences[constrained], checkpoint)
        if not constrained.any():
            raise InputError.bad(
                "fn", "an output that changes when some group is left out", "the same output"
            )
        rows = differences[constrained]
        check_magnitude(rows, "fn")  # the solver squares them: NaN beyond, not an error
        self.covariance_ = _solver.solve(
            rows,
            np.ones(len(rows)),
            max_iter=max_iter,
            tol=tol,
            argument="fn",
            row_names=[
                f"the difference of group {g!r}" for g in group_labels[constrained].tolist()
            ],
            advice=_ROUNDING_ADVICE,
        )
        self.calibration_ = calibration
        self.output_ = outputs[0]
        self.group_labels_ = group_labels
        self.differences_ = differences
        self.constrained_ = constrained
        return self

    @property
    def noise_multiplier_(self) -> float:
        return self.calibration_.noise_multiplier

    def release(self, random_state=None) -> np.ndarray:
        """``fn(data)`` plus calibrated DSI noise, in the shape of ``fn``'s output.

        Parameters
        ----------
        random_state : None, int or numpy Generator
            The noise draw; the same seed gives the same release. Each call with new randomness
            is one more release of the same differences, and nothing counts them: the guarantee
            covers ``steps`` of them (averaging k releases divides the noise by sqrt(k)).

        Returns
        -------
        ndarray
        """
        check_is_fitted(self, "covariance_")
        noise = self.covariance_.sample(scale=self.noise_multiplier_, random_state=random_state)
        return self.output_ + noise.reshape(self.output_.shape)


# A group whose difference is refused changed the output only at rounding level in a direction no
# other group moves it: the ulps are real information (e.g. the subset's size) that noise this
# small could not hide, since adding it to the output rounds it away.
_ROUNDING_ADVICE = (
    "if that change is rounding error, round fn's output (e.g. np.round(out, 12)) so that it "
    "vanishes, or leave that output coordinate out"
)


def _run_all(
    fn,
    data,
    masks: Sequence[np.ndarray | None],
    names: Sequence[str],
    n_jobs: int,
    store: _RunStore | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[np.ndarray]:
    """``fn`` on every subset (joblib workers), as float arrays of one shape; an error names the
    subset (``names``, one per mask). Runs ``store`` holds are not repeated; each new one is
    stored as it finishes, and ``progress(done, total)`` follows them."""
    from joblib import Parallel, delayed

    total = len(masks)
    outputs: list[np.ndarray | None] = [None] * total
    if store is not None:
        stored = store.load(total)
        if (0 in stored) != (1 in stored):  # the two full-data runs go together: an fn that
            stored.pop(0, None)  # changes its input in place is caught only by running both
            stored.pop(1, None)
        for k, out in stored.items():
            outputs[k] = _as_output(out, names[k])
    pending = [k for k in range(total) if outputs[k] is None]
    done = total - len(pending)
    if progress is not None:
        progress(done, total)
    # each run is stored where it ran, as it finishes: joblib stops at an error (or Ctrl-C)
    # without handing back the runs finished beside it
    folder = None if store is None else store.path  # not the header: it holds every group
    runs = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_stored_call)(k, fn, _subset(data, masks[k]), names[k], folder) for k in pending
    )
    for k, out in runs:
        outputs[k] = _as_output(out, names[k])
        done += 1
        if progress is not None:
            progress(done, total)
    shape = outputs[0].shape
    for out, name in zip(outputs[1:], names[1:], strict=True):
        if out.shape != shape:
            raise InputError.bad(name, f"the shape of fn(data), {shape}", out)
    return outputs


def _stored_call(k: int, fn, subset: Any, name: str, folder: Path | None) -> tuple[int, Any]:
    """``(k, fn(subset))``, its output saved in the checkpoint ``folder`` (when given and
    numeric)."""
    out = _call(fn, subset, name)
    if folder is not None:
        try:
            out = _as_output(out, name)
        except InputError:  # not stored: the caller refuses it, naming the run
            return k, out
        _save_run(folder, k, out)
    return k, out


def _as_output(out: Any, name: str) -> np.ndarray:
    """A run's output as a float array; ``None`` (an ``fn`` without ``return``) is named as such
    (as an array it is NaN, and the error said "got nan")."""
    if out is None:
        raise InputError.bad(name, "an array of numbers (fn returned None: a missing return?)", out)
    return as_float_array(out, name)


def _call(fn, subset: Any, name: str) -> Any:
    """``fn(subset)``; an exception it raises gets a note naming the subset (a group's)."""
    try:
        return fn(subset)
    except Exception as exc:
        exc.add_note(f"raised by {name}")
        raise


# Two runs of fn(data) may differ by this fraction of the smallest group difference (threaded
# reductions can change the last bits); more means fn is random and the differences measure that.
_RERUN_TOL = 1e-6


def _check_deterministic(
    first: np.ndarray, second: np.ndarray, rows: np.ndarray, checkpoint: Any = None
) -> None:
    """Refuse a random ``fn``: its two runs on the same data differ beyond ``_RERUN_TOL`` of the
    smallest (infinity-norm) difference in ``rows`` (the non-zero, distinct group differences).
    With a ``checkpoint``, the message says that its stored runs are reused."""
    change = float(np.abs(first - second).max())
    if change == 0.0:
        return
    smallest = float(np.abs(rows).max(axis=1).min()) if rows.size else 0.0
    if change > _RERUN_TOL * smallest:
        raise InputError(
            "fn: expected a deterministic function (the same data gives the same output), got "
            f"two runs of fn(data) differing by up to {change:.3g}, against a smallest group "
            f"difference of {smallest:.3g}: the differences would measure fn's randomness, "
            "which the guarantee does not cover (fix its seed, e.g. random_state=0; or fn "
            "modifies its input in place: work on a copy)"
            + (
                ""
                if checkpoint is None
                else f"; the runs stored in checkpoint {str(checkpoint)!r} are reused by a rerun: "
                "delete it after changing fn"
            ),
            argument="fn",
        )


def _run_header(fn, data: Any, group_labels: np.ndarray, masks) -> dict[str, Any]:
    """What identifies a fit's runs: the groups, the subsets' sizes, the data's hash, fn's name
    and code."""
    import joblib

    try:
        data_hash = joblib.hash(data)
    except Exception as exc:  # an object joblib cannot pickle
        raise InputError.bad(
            "checkpoint",
            f"data that joblib.hash can hash (to tell checkpoints apart) ({exc})",
            data,
        ) from None
    return {
        "format": "trustlab.privacy.DSIMechanism.fit",
        "version": 2,
        "fn": getattr(fn, "__qualname__", type(fn).__qualname__),
        "fn_code": _code_hash(fn),
        "groups": [repr(g) for g in group_labels.tolist()],
        "subset_sizes": [int(mask.sum()) for mask in masks],
        "data_hash": data_hash,
    }


def _code_hash(fn) -> str | None:
    """A hash of a Python function's code (bytecode, names, constants and nested code, not its
    file or line numbers, which change when a notebook cell is rerun) with its defaults and
    closure values (plain values only: see :func:`_plain`); None for a callable without Python
    code of its own."""
    import joblib

    func = getattr(fn, "__func__", fn)  # a bound method: its function
    code = getattr(func, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    try:
        cells = tuple(_plain(cell.cell_contents) for cell in func.__closure__ or ())
        keywords = {key: _plain(v) for key, v in (func.__kwdefaults__ or {}).items()}
        defaults = _plain(func.__defaults__), keywords
        values = joblib.hash((defaults, cells))
    except Exception:  # an empty cell or a value pickle cannot hash: the code alone
        values = None
    return hashlib.sha256(repr((_code_key(code), values)).encode("utf-8")).hexdigest()


_PLAIN = (type(None), bool, int, float, complex, str, bytes, np.generic, np.ndarray)


def _plain(value: Any) -> Any:
    """A default or closure value as hashed: numbers, text and arrays, and tuples, lists, dicts
    and sets holding only such values (parameters such as quantile levels [0.25, 0.75] or
    {"q": 0.5}: two fns differing only there resumed each other's runs), as they are;
    functions, classes and modules by their name; any other object (a cache object, a model fn
    trains in place) by its type only, as object state is not seen: its state after the runs
    done before a crash refused the resume of the same ``fn`` ("fn's code differ")."""
    if isinstance(value, _PLAIN):
        return value
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    if type(value) in (list, dict, set, frozenset) and _holds_plain_values(value):
        if type(value) is dict:
            return ("dict", sorted((repr(k), _plain(v)) for k, v in value.items()))
        if type(value) is list:
            return ("list", [_plain(v) for v in value])
        return ("set", sorted(map(repr, value)))
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(name, str):  # a function, class or module: np.mean and np.median differ
        return f"{getattr(value, '__module__', None) or ''}.{name}"
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _holds_plain_values(value: Any, depth: int = 0) -> bool:
    """Whether a container holds only plain values (numbers, text, arrays) and such containers,
    at most four levels deep."""
    if isinstance(value, _PLAIN):
        return True
    if depth >= 4 or type(value) not in (tuple, list, dict, set, frozenset):
        return False
    items = list(value.keys()) + list(value.values()) if type(value) is dict else list(value)
    return all(_holds_plain_values(item, depth + 1) for item in items)


def _code_key(code: types.CodeType) -> tuple:
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            consts.append(_code_key(const))
        elif isinstance(const, frozenset):  # its order follows the per-process string hash
            consts.append(sorted(map(repr, const)))
        else:
            consts.append(repr(const))
    return (code.co_code, code.co_names, code.co_varnames, code.co_freevars, tuple(consts))


# How a refused resume names what differs.
_HEADER_NAMES = {
    "format": "the kind of checkpoint",
    "version": "the checkpoint version",
    "fn": "fn's name",
    "fn_code": "fn's code",
    "groups": "the group labels",
    "subset_sizes": "the groups' sizes",
    "data_hash": "the data",
}


class _RunStore:
    """A folder of finished runs of fn: ``header.json`` and ``run_<k>.npy`` per run ``k``, each
    written to a temporary file and renamed, so a crash leaves whole files only."""

    def __init__(self, path: str | os.PathLike, header: dict[str, Any]):
        self.path = Path(path)
        self.header = header
        head = self.path / "header.json"
        if self.path.exists() and not self.path.is_dir():
            raise InputError.bad("checkpoint", "a folder (or a path to create one)", str(path))
        if head.is_file():
            try:
                stored = json.loads(head.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise InputError(
                    f"checkpoint: could not read {head}: {exc}", argument="checkpoint"
                ) from exc
            other = [name for key, name in _HEADER_NAMES.items() if stored.get(key) != header[key]]
            if other:
                raise InputError(
                    f"checkpoint: expected a checkpoint of this fit at {self.path}, got one of "
                    f"another fit ({', '.join(other)} differ); delete it or give another folder",
                    argument="checkpoint",
                )
        elif self.path.is_dir() and any(self.path.iterdir()):
            raise InputError.bad(
                "checkpoint", "an empty or new folder, or one an earlier fit wrote", str(path)
            )
        else:
            self.path.mkdir(parents=True, exist_ok=True)
            write_atomic(head, json.dumps(header, indent=1).encode("utf-8"))

    def load(self, total: int) -> dict[int, np.ndarray]:
        """The stored runs, by index."""
        runs = {}
        for k in range(total):
            file = self.path / f"run_{k}.npy"
            if file.is_file():
                try:
                    runs[k] = np.load(file, allow_pickle=False)
                except (OSError, ValueError, EOFError) as exc:  # not written by a fit
                    raise InputError(
                        f"checkpoint: could not read {file} as a .npy array of numbers "
                        f"({type(exc).__name__}); delete that file (its run is repeated) or the "
                        "folder",
                        argument="checkpoint",
                    ) from exc
        return runs


def _save_run(folder: Path, k: int, output: np.ndarray) -> None:
    """Run ``k``'s output as ``run_<k>.npy`` in ``folder``, written whole (see _RunStore)."""
    import io

    buffer = io.BytesIO()
    np.save(buffer, output, allow_pickle=False)
    write_atomic(folder / f"run_{k}.npy", buffer.getvalue())


def _length_of(data: Any) -> int:
    if isinstance(data, tuple):
        if not data:
            raise InputError.bad("data", "a non-empty tuple of arrays", data)
        lengths = {_length_of(part) for part in data}
        if len(lengths) != 1:
            raise InputError.bad("data", "tuple elements of the same length", sorted(lengths))
        return lengths.pop()
    if _is_sparse(data):  # len() of a SciPy sparse matrix is refused as ambiguous
        return int(data.shape[0])
    try:
        return len(data)
    except TypeError:
        raise InputError.bad(
            "data", "records indexed by row (an array, DataFrame, sparse matrix or list)", data
        ) from None


def _is_sparse(data: Any) -> bool:
    from scipy import sparse

    return sparse.issparse(data)


def _subset(data: Any, mask: np.ndarray | None) -> Any:
    if mask is None:
        return data
    if isinstance(data, tuple):
        return tuple(_subset(part, mask) for part in data)
    if hasattr(data, "iloc"):
        return data.iloc[np.flatnonzero(mask)]
    if isinstance(data, np.ndarray):
        return data[mask]
    if _is_sparse(data):  # rows of any format, in that format (COO cannot be indexed)
        return data.tocsr()[np.flatnonzero(mask)].asformat(data.format)
    return [item for item, keep in zip(data, mask, strict=True) if keep]


def _informative_rows(rows: np.ndarray) -> np.ndarray:
    """False for zero rows and for repeats of an earlier row (their constraints are redundant)."""
    keep = np.any(rows != 0, axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    unique = np.zeros(rows.shape[0], dtype=bool)
    unique[first] = True
    return keep & unique
