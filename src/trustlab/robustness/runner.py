"""Certifying a dataset: tasks of points in this process, in joblib workers or on a Dask cluster,
with a JSONL checkpoint that an interrupted run resumes from.

Point ``i`` always draws its noise from its own stream (the run's entropy, ``i``), so the result
does not depend on the number of workers, the task size or interruptions. The checkpoint stores
counts, not certificates: alpha and the cost matrix act after sampling, so a finished
checkpoint can be re-certified under others without sampling again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_n_jobs, check_positive_int
from trustlab._lazy import require
from trustlab.errors import InputError
from trustlab.robustness._progress import progress_reporter
from trustlab.robustness._sampling import eval_mode, is_torch_module
from trustlab.robustness._store import CheckpointStore
from trustlab.robustness.certificates import DatasetCertificate, check_class_array
from trustlab.robustness.classifier import SmoothedClassifier, entropy_of

__all__ = ["certify_dataset"]

# Samples per joblib task and per checkpoint line batch: a few seconds of a small model's work.
_SAMPLES_PER_CHUNK = 200_000
_MAX_POINTS_PER_CHUNK = 64


def certify_dataset(
    classifier: SmoothedClassifier,
    X: Any,
    y: Any,
    *,
    n0: int = 100,
    n: int = 10_000,
    alpha: float = 0.001,
    cost_matrix: Any = None,
    random_state: Any = None,
    checkpoint: str | Path | None = None,
    model_id: str | None = None,
    n_jobs: int | None = 1,
    dask_scheduler: str | None = None,
    points_per_task: int | None = None,
    progress: bool | Callable[[int, int], None] = False,
    fresh: bool = False,
) -> DatasetCertificate:
    """Certify every point of a dataset, batched, in parallel, resumable.

    Parameters
    ----------
    classifier : SmoothedClassifier
    X : array-like of shape (m, *input_shape)
    y : array-like of shape (m,)
        True class indices.
    n0, n : int
        Selection and estimation samples per point (``n0 <= n``).
    alpha : float
        Per-point failure probability, in (0, 0.5].
    cost_matrix : (K, K) array-like, optional
        Default: every mistake harmful.
    random_state : None, int or numpy Generator
        Point ``i`` draws from its own stream keyed by this seed and ``i``: the result does not
        depend on ``n_jobs``, ``points_per_task``, batch sizes or interruptions.
    checkpoint : path, optional
        A JSONL file recording each finished point's counts. A rerun with the same file skips
        the recorded points and gives the same result as an uninterrupted run; with
        ``random_state=None`` it reuses the seed stored in the file. Another model, data, sigma,
        n0, n or seed is refused. alpha and the cost matrix may change between runs. A torch
        module is told apart by a hash of its parameters and buffers; any other base model (a
        function, a lambda, an object) cannot be, so it needs ``model_id``.
    model_id : str, optional
        A name for the base model, stored in the checkpoint and compared on resume: another
        name is refused. Required with ``checkpoint`` when the base model is not a torch module
        (two callables cannot be told apart, and resuming with another one would mix two
        models' counts); the same name vouches that the model is the same.
    n_jobs : int or None
        joblib workers over tasks of points (None or 1: in this process; -1: all cores).
    dask_scheduler : str, optional
        Address of a Dask scheduler; the tasks then run on that cluster through joblib's dask
        backend (needs ``distributed``). It is connected to before anything is deleted or
        sampled: an address that is malformed or does not answer is an InputError.
    points_per_task : int, optional
        Points per task and per checkpoint write (default: about 200,000 samples' worth).
    progress : bool or callable
        True: a progress bar on stderr; a callable receives ``(points_done, points_total)``:
        first with the points the checkpoint already holds, once every input (the checkpoint
        included) is checked and before any sampling, then as tasks finish. Nothing is written
        before that first call returns.
    fresh : bool, default False
        Delete ``checkpoint`` (once every other input is checked) and start afresh, instead of
        resuming it or refusing it for other settings.

    Returns
    -------
    DatasetCertificate

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.robustness import SmoothedClassifier
    >>> X = np.array([[1.0], [-0.3], [0.2]])
    >>> smooth = SmoothedClassifier(lambda b: (b[:, 0] > 0).astype(int), 0.5, 2)
    >>> result = certify_dataset(smooth, X, [1, 0, 1], n=2000, random_state=0)
    >>> result.certified_accuracy([0.0, 0.5], "std").round(2).tolist()
    [1.0, 0.33]
    """
    if not isinstance(classifier, SmoothedClassifier):
        raise InputError.bad("classifier", "a SmoothedClassifier", classifier)
    X = classifier._as_inputs(X, "X", batch=True)
    labels = check_class_array(y, "y", classifier.n_classes, len(X))
    n0, n, alpha, costs = classifier._check_settings(n0, n, alpha, cost_matrix)
    workers = check_n_jobs(n_jobs)
    if points_per_task is None:  # 0 is refused below, not read as the default
        chunk = max(1, min(_MAX_POINTS_PER_CHUNK, _SAMPLES_PER_CHUNK // (n0 + n)))
    else:
        chunk = check_positive_int(points_per_task, "points_per_task")

    if model_id is not None and (not isinstance(model_id, str) or not model_id.strip()):
        raise InputError.bad("model_id", "a non-empty string naming the base model", model_id)
    if checkpoint is not None and model_id is None and not is_torch_module(classifier.base_model):
        raise InputError.bad(
            "model_id",
            "a name for the base model with checkpoint= when it is not a torch module (a "
            "callable cannot be told apart from another one, whose counts a resumed run would "
            "mix in); pass the same model_id to every run of this checkpoint",
            None,
        )
    if not isinstance(fresh, bool):
        raise InputError.bad("fresh", "True or False", fresh)
    if dask_scheduler is not None:  # a wrong address is refused before anything is deleted
        _dask_client(dask_scheduler).close()
    if fresh and checkpoint is not None:
        entropy_of(random_state)  # a bad seed is refused before the checkpoint is deleted
        CheckpointStore.check_path(checkpoint).unlink(missing_ok=True)
    stored = None if checkpoint is None else CheckpointStore.stored_entropy(checkpoint)
    entropy = stored if random_state is None and stored is not None else entropy_of(random_state)
    store = None
    if checkpoint is not None:
        header = _run_header(classifier, X, n0, n, entropy)
        if model_id is not None:  # absent otherwise: a torch run's header stays as it was
            header["model_id"] = model_id
        store = CheckpointStore(checkpoint, header)
    done = {} if store is None else dict(store.records)
    pending = [i for i in range(len(X)) if i not in done]
    tasks = [pending[k : k + chunk] for k in range(0, len(pending), chunk)]

    tops = np.zeros(len(X), dtype=np.intp)
    counts = np.zeros((len(X), classifier.n_classes), dtype=np.int64)
    for i, (top, row) in done.items():
        tops[i], counts[i] = top, row
    report = progress_reporter(progress, len(X), "certifying")
    finished = len(done)
    report(finished)
    runs = _run_tasks(classifier, X, tasks, n0, n, entropy, workers, dask_scheduler)
    try:
        with eval_mode(classifier.base_model):  # once for the run: workers never switch it
            for indices, task_tops, task_counts in runs:
                tops[indices], counts[indices] = task_tops, task_counts
                if store is not None:
                    store.append(indices, task_tops, task_counts)
                finished += len(indices)
                report(finished)
    finally:
        report(None)
    return DatasetCertificate._from_valid_counts(
        tops, counts, labels, classifier.sigma, alpha, costs, n0
    )


def _run_tasks(classifier, X, tasks, n0, n, entropy, workers, dask_scheduler):
    """Yield finished tasks as they complete, in this process, in joblib workers or on Dask."""
    if not tasks:
        return
    if dask_scheduler is None and workers == 1:
        for indices in tasks:
            yield classifier._sample_points(X[indices], indices, n0, n, entropy)
        return
    import joblib

    jobs = (
        joblib.delayed(classifier._sample_points)(X[indices], indices, n0, n, entropy)
        for indices in tasks
    )
    if dask_scheduler is None:
        yield from joblib.Parallel(n_jobs=workers, return_as="generator_unordered")(jobs)
        return
    with _dask_client(dask_scheduler), joblib.parallel_config(backend="dask"):
        yield from joblib.Parallel(return_as="generator_unordered")(jobs)


def _dask_client(address: Any):
    """A Dask client connected to ``address``; an address that is malformed or does not answer
    is an InputError naming ``dask_scheduler``."""
    distributed = require("dask.distributed", "dask")
    if isinstance(address, str) and not address.strip():  # Client("") starts a local cluster
        raise InputError.bad("dask_scheduler", "the address of a Dask scheduler", address)
    try:
        return distributed.Client(address)
    except (OSError, ValueError) as exc:  # TimeoutError is an OSError
        raise InputError(
            f"dask_scheduler: expected the address of a running Dask scheduler (e.g. "
            f"tcp://host:8786), got {address!r}: {exc}",
            argument="dask_scheduler",
        ) from exc


def _run_header(classifier: SmoothedClassifier, X: np.ndarray, n0: int, n: int, entropy: int):
    """What identifies a certification run's samples (alpha and costs act after sampling)."""
    data = hashlib.sha256(np.ascontiguousarray(X).tobytes())
    data.update(repr(X.shape).encode())
    return {
        "data_sha256": data.hexdigest(),
        "model_sha256": _model_fingerprint(classifier.base_model),
        "num_classes": classifier.n_classes,  # the key checkpoints written before say
        "sigma": classifier.sigma,
        "n0": n0,
        "n": n,
        "entropy": entropy,
    }


def _model_fingerprint(model: Any) -> str | None:
    """A hash of a torch module's parameters and buffers; None for other callables (which
    ``certify_dataset`` then identifies by their ``model_id``)."""
    if not is_torch_module(model):
        return None
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
