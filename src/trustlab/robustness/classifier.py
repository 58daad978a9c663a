"""The smoothed classifier: a base classifier under Gaussian noise, its prediction and certificate.

Sampling is batched across points (see ``_sampling``): every point draws its noise from its own
stream, keyed by the run's entropy and the point's index, so a point's counts do not depend on
the batch size, on the other points or on how a run over a dataset is split into tasks
(:func:`~trustlab.robustness.certify_dataset` relies on that).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_positive_int, check_random_state
from trustlab._renamed import renamed_attribute, renamed_keyword
from trustlab.errors import InputError
from trustlab.robustness import bounds
from trustlab.robustness._sampling import (
    LabelFunction,
    check_sigma,
    count_labels,
    eval_mode,
    is_torch_module,
    point_streams,
)
from trustlab.robustness.certificates import (
    ABSTAIN,
    Certificate,
    DatasetCertificate,
    check_alpha,
    check_class_array,
    check_cost_matrix,
)

__all__ = ["SmoothedClassifier"]


class SmoothedClassifier:
    """A base classifier smoothed with Gaussian noise: prediction and certification.

    Parameters
    ----------
    base_model : torch.nn.Module or callable
        A torch module mapping a batch to ``(batch, K)`` scores, or any callable taking a numpy
        array ``(batch, *input_shape)`` and returning ``(batch, K)`` scores or ``(batch,)``
        labels. Plain callables need no torch.
    sigma : float
        Standard deviation of the Gaussian noise (in the input's units).
    n_classes : int
        ``K``. (``num_classes=`` is its deprecated name: it works, with a FutureWarning, for
        one release; so does reading ``smooth.num_classes``.)
    batch_size : int
        Noisy inputs per call of the base model. Points are packed into full batches.

    Examples
    --------
    >>> import numpy as np
    >>> def halfspace(batch):  # class 1 right of 0 along the first axis
    ...     return (batch[:, 0] > 0).astype(int)
    >>> smooth = SmoothedClassifier(halfspace, sigma=0.5, n_classes=2)
    >>> smooth.predict(np.array([1.0, 0.0]), n=1000, alpha=0.001, random_state=0)
    1
    >>> cert = smooth.certify(np.array([1.0, 0.0]), 1, n0=100, n=10_000, alpha=0.001,
    ...                       random_state=0)
    >>> 0.7 < cert.radius_std < 1.0  # the true radius is 1
    True
    """

    ABSTAIN = ABSTAIN
    num_classes = renamed_attribute("num_classes", "n_classes")

    @renamed_keyword("num_classes", "n_classes")
    def __init__(self, base_model: Any, sigma: float, n_classes: int, *, batch_size: int = 1000):
        if not callable(base_model):
            raise InputError.bad("base_model", "a torch module or a callable", base_model)
        self.base_model = base_model
        self.sigma = check_sigma(sigma)
        self.n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
        self.batch_size = check_positive_int(batch_size, "batch_size")

    def __repr__(self) -> str:
        return (
            f"SmoothedClassifier({type(self.base_model).__name__}, sigma={self.sigma:g}, "
            f"n_classes={self.n_classes}, batch_size={self.batch_size})"
        )

    # -- sampling -----------------------------------------------------------------------------

    def _as_inputs(self, X: Any, name: str, *, batch: bool = False) -> np.ndarray:
        """Inputs as an array (float32 for torch modules: converted once, not per batch)."""
        arr = as_float_array(X, name)
        if arr.ndim == 0:
            raise InputError.bad(name, "an input array (at least 1 dimension)", X)
        if batch and arr.ndim < 2:
            raise InputError.bad(name, "a batch of inputs (one more axis than one input)", arr)
        return arr.astype(np.float32) if is_torch_module(self.base_model) else arr

    def _count(
        self, X: np.ndarray, num: int, streams: list[np.random.Generator], argument: str = "X"
    ) -> np.ndarray:
        labels_of = LabelFunction(self.base_model, self.n_classes, argument)
        return count_labels(labels_of, X, num, streams, self.sigma, self.n_classes, self.batch_size)

    def _sample_points(
        self,
        X: np.ndarray,
        indices: Sequence[int],
        n0: int,
        n: int,
        entropy: int,
        argument: str = "X",
    ) -> tuple[Sequence[int], np.ndarray, np.ndarray]:
        """Top classes (from ``n0`` selection samples) and ``n`` estimation counts of points.

        Each point draws from its own stream (``entropy``, its index): selection first, then
        estimation from the continuing stream (fresh noise).
        """
        streams = point_streams(entropy, indices)
        selection = self._count(X, n0, streams, argument)
        estimation = self._count(X, n, streams, argument)
        return indices, np.argmax(selection, axis=1), estimation

    def _check_settings(
        self, n0: Any, n: Any, alpha: Any, cost_matrix: Any
    ) -> tuple[int, int, float, np.ndarray]:
        """The certification settings, checked once (for ``certify`` and ``certify_dataset``)."""
        n0 = check_positive_int(n0, "n0")
        n = _check_samples(n)
        if n0 > n:
            raise InputError.bad("n0", f"at most n = {n} selection samples", n0)
        return n0, n, check_alpha(alpha), check_cost_matrix(cost_matrix, self.n_classes)

    def sample_counts(self, X: Any, num: int, *, random_state: Any = None) -> np.ndarray:
        """Label counts of ``num`` noisy copies of each input in the batch ``X``.

        Point ``i`` draws its noise from its own stream (entropy of ``random_state``, index
        ``i``), so its counts do not depend on the batch size or on the other points.

        Returns
        -------
        (len(X), K) int64 array
        """
        X = self._as_inputs(X, "X", batch=True)
        num = check_positive_int(num, "num")
        streams = point_streams(entropy_of(random_state), range(len(X)))
        return self._count(X, num, streams)

    # -- prediction and certification ----------------------------------------------------------

    def predict(self, x: Any, n: int, alpha: float, *, random_state: Any = None) -> int:
        """Cohen's PREDICT: the top class of ``n`` noisy samples, or ``ABSTAIN`` (-1).

        Abstains when the two-sided binomial test of the top count against the runner-up
        (``scipy.stats.binomtest``) has p-value above ``alpha``; otherwise the returned class
        is the smoothed classifier's with probability at least ``1 - alpha``.

        Parameters
        ----------
        x : array-like
            One input (no batch axis).
        n : int
            Noisy samples.
        alpha : float
            Failure probability, in (0, 0.5].
        random_state : None, int or numpy Generator
        """
        x = self._as_inputs(x, "x")
        n = _check_samples(n)
        alpha = check_alpha(alpha)
        counts = self._count(x[None], n, point_streams(entropy_of(random_state), [0]), "x")[0]
        order = np.argsort(-counts, kind="stable")
        pvalue = bounds.prediction_pvalue(counts[order[0]], counts[order[1]])
        return ABSTAIN if pvalue > alpha else int(order[0])

    def certify(
        self,
        x: Any,
        y: int,
        n0: int,
        n: int,
        alpha: float,
        cost_matrix: Any = None,
        *,
        random_state: Any = None,
    ) -> Certificate:
        """Certify one input: the standard, cost-sensitive, combined and pair radii.

        The same certificate as point 0 of :func:`~trustlab.robustness.certify_dataset` on
        ``x[None]`` with the same ``random_state``.

        Parameters
        ----------
        x : array-like
            One input (no batch axis).
        y : int
            Its true (seed) class; the harmful targets are ``{j : cost_matrix[y, j] > 0}``.
        n0, n : int
            Selection samples (choose the top class) and estimation samples (bound it).
        alpha : float
            Failure probability, in (0, 0.5]; each certificate holds with probability at least
            ``1 - alpha``.
        cost_matrix : (K, K) array-like, optional
            Default: every mistake harmful.
        random_state : None, int or numpy Generator

        Returns
        -------
        Certificate
        """
        x = self._as_inputs(x, "x")
        label = check_class_array([y], "y", self.n_classes, 1)
        n0, n, alpha, costs = self._check_settings(n0, n, alpha, cost_matrix)
        with eval_mode(self.base_model):
            entropy = entropy_of(random_state)
            _, top, counts = self._sample_points(x[None], [0], n0, n, entropy, "x")
        result = DatasetCertificate._from_valid_counts(
            top, counts, label, self.sigma, alpha, costs, n0
        )
        return result.certificate(0)


def entropy_of(random_state: Any) -> int:
    """The integer entropy of a run's per-point streams (fresh when ``random_state`` is None)."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state)  # validates: a non-negative int
        return int(random_state)
    return int(check_random_state(random_state).integers(0, 2**63))


def _check_samples(n: Any) -> int:
    """The number of noisy samples, 1 to 2**53: beyond, counts are not exact in float64 and the
    bound on p_A rounds to 1 (an infinite radius), long before the sampling would end."""
    n = check_positive_int(n, "n")
    if n > 2**53:
        raise InputError.bad("n", "an integer in [1, 2**53] (noisy samples)", n)
    return n
