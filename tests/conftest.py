"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os

import matplotlib
import pytest

from background_helpers import SMOLLM2_CACHE
from background_jobs import Background

# Two shared cores: numeric libraries run single-threaded in tests, and plots never need a display.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
matplotlib.use("Agg")

_BACKGROUND = Background()


def pytest_collection_finish(session):
    """Start the selected modules' ``BACKGROUND_JOBS`` (tests/background_jobs.py)."""
    jobs = {}
    if any("smollm2" in getattr(item, "fixturenames", ()) for item in session.items):
        jobs["smollm2-cache"] = SMOLLM2_CACHE  # first: the session fixture waits for it
    for module in dict.fromkeys(getattr(item, "module", None) for item in session.items):
        jobs.update(getattr(module, "BACKGROUND_JOBS", None) or {})
    _BACKGROUND.start(jobs)


def pytest_sessionfinish(session, exitstatus):
    _BACKGROUND.stop()


def pytest_terminal_summary(terminalreporter):
    """How the background worker was used (room for more jobs, or jobs taken back)."""
    line = _BACKGROUND.summary()
    if line:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def background():
    """The session's background jobs: ``background.result(name, job)``."""
    return _BACKGROUND


@pytest.fixture(scope="session")
def default_audit(tmp_path_factory):
    """``run_audit()`` on the bundled chile data with the default zoo and seed 0, once a session."""
    from trustlab.audit import run_audit

    return run_audit(out=tmp_path_factory.mktemp("default_audit"), random_state=0)


@pytest.fixture(autouse=True)
def _close_figures():
    """Close matplotlib figures a test leaves open, so memory stays flat over the suite."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="session")
def smollm2(background):
    """SmolLM2-135M-Instruct loaded once a session (torch on one thread; cached safetensors copy,
    which the background worker fills at the session's start where it is missing)."""
    import torch

    from trustlab.llm import load_model

    background.result("smollm2-cache", SMOLLM2_CACHE)
    torch.set_num_threads(1)
    return load_model("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def tiny_llama_folder(tmp_path_factory, smollm2):
    """A 2-layer Llama of width 48 with random weights on SmolLM2's tokenizer, saved once a
    session (the SAE CLI tests train on it)."""
    from tiny_llama import tiny_llama

    folder = tmp_path_factory.mktemp("tiny") / "tiny-llama"
    tiny_llama(smollm2.tokenizer, smollm2.model.config.vocab_size, hidden_size=48).save(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_transfer_study():
    """``backdoor_transfer_study`` on its two tiny models, seed 20 (a seed no setting was chosen
    on), scales (0.5, 1, 2), three random vectors; with its progress calls. Once a session: the
    T3 checks and the CLI tests read it."""
    import torch

    from trustlab.safety.transfer import backdoor_transfer_study

    torch.set_num_threads(1)
    calls = []
    study = backdoor_transfer_study(
        alphas=(0.5, 1.0, 2.0),
        n_random=3,
        random_state=20,
        progress=lambda done, total: calls.append((done, total)),
    )
    return study, calls


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt for the test (Python's default), even when the run started
    with SIGINT ignored (a job a script put in the background: ``make test &``), where
    ``_thread.interrupt_main()`` does nothing and a test waiting for its Ctrl-C hangs."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture(autouse=True)
def _sigint_handler_restored():
    """A test (or the library code it runs) that changes the SIGINT handler does not leak it into
    later tests: the Ctrl-C tests of tests/llm once found Ctrl-C ignored after an earlier test,
    failed and hung (``_thread.interrupt_main`` does nothing when SIGINT is not Python's)."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not before:
        signal.signal(signal.SIGINT, before)
