"""The black-box DSI mechanism: leave-one-group-out runs of any function, then calibrated noise."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import as_1d, as_float_array, check_callable, check_n_jobs
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
        full data that differ by more than 1e-6 of the smallest group difference are refused.
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

    def fit(self, data: Any, groups: Any) -> DSIMechanism:
        """Run ``fn`` on the data (twice) and on each leave-one-group-out subset, then solve.

        Parameters
        ----------
        data : array-like, DataFrame, SciPy sparse matrix, or tuple of them
            The records, indexed by row. A tuple ``(X, y, ...)`` is subset element-wise.
        groups : array-like of shape (n_samples,)
            The group of each record; each distinct value is one reference set (its removal).
            Give every record its own label to protect single records.

        Returns
        -------
        self
        """
        check_callable(self.fn, "fn")
        calibration = calibrate(self.epsilon, self.delta, self.steps, self.accountant)
        max_iter, tol = check_solver_options(self.max_iter, self.tol)
        n_jobs = check_n_jobs(self.n_jobs)
        labels = as_1d(groups, "groups")
        n_samples = _length_of(data)
        if labels.size != n_samples:
            raise InputError.bad("groups", f"one label per record ({n_samples})", labels)
        group_labels = np.unique(labels)
        masks = [labels != g for g in group_labels]
        # an error on a subset names it: fn(data) itself may be fine (a group holding a class)
        names = ["fn(data)", "fn(data) run a second time"] + [
            f"fn(data without group {g!r}, {int(mask.sum())} records)"
            for g, mask in zip(group_labels.tolist(), masks, strict=True)
        ]
        # fn(data) twice: a random fn would make the differences measure its randomness
        outputs = _run_all(self.fn, data, [None, None, *masks], names, n_jobs)
        full = outputs[0].ravel()
        differences = np.stack([full - out.ravel() for out in outputs[2:]])
        constrained = _informative_rows(differences)
        _check_deterministic(full, outputs[1].ravel(), differences[constrained])
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
    fn, data, masks: Sequence[np.ndarray | None], names: Sequence[str], n_jobs: int
) -> list[np.ndarray]:
    """``fn`` on every subset (joblib workers), as float arrays of one shape; an error names the
    subset (``names``, one per mask)."""
    from joblib import Parallel, delayed

    raw = Parallel(n_jobs=n_jobs)(
        delayed(_call)(fn, _subset(data, mask), name)
        for mask, name in zip(masks, names, strict=True)
    )
    outputs = [as_float_array(out, name) for out, name in zip(raw, names, strict=True)]
    shape = outputs[0].shape
    for out, name in zip(outputs[1:], names[1:], strict=True):
        if out.shape != shape:
            raise InputError.bad(name, f"the shape of fn(data), {shape}", out)
    return outputs


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


def _check_deterministic(first: np.ndarray, second: np.ndarray, rows: np.ndarray) -> None:
    """Refuse a random ``fn``: its two runs on the same data differ beyond ``_RERUN_TOL`` of the
    smallest (infinity-norm) difference in ``rows`` (the non-zero, distinct group differences)."""
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
            "modifies its input in place: work on a copy)",
            argument="fn",
        )


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
