"""UEFL on a real Flower deployment on 127.0.0.1: a SuperLink and two SuperNodes as
subprocesses (insecure mode, free ports, always stopped), the app submitted with `flwr run`."""

import numpy as np
import pytest

from trustlab.errors import BackendError
from trustlab.federated import UEFLConfig, simulate_uefl
from trustlab.federated.flower_launch import run_flower_app, run_loopback, write_flower_app

# The least work that still runs the whole protocol: every message starts a ClientApp process that
# imports torch, and a SuperNode looks for messages every 3 s, so the five exchanges (the
# partition-id roll call, train, evaluate, train with a k-means extension, evaluate) dominate. The
# smallest model, and book 0 drawn from the seed (no k-means, hence no scikit-learn import, in round
# 1); the extension still creates codebook 1 by k-means on its node.
CONFIG = UEFLConfig(rounds=1, rounds_plus=1, local_epochs=1, mc_passes=2, max_iterations=2,
                    threshold_factor=0.0, evaluate_every_round=False, random_state=2, dim=4,
                    seg=1, n_codes=4, hidden=8, batch_size=128,
                    first_book_init="normal")  # fmt: skip


def _loopback_job():
    """The Flower run, in a folder of its own (mostly waiting on the nodes' polling, so it runs
    in the suite's worker process while other tests run: tests/background_jobs.py)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="uefl-flower-test-") as folder:
        return run_loopback(CONFIG, n_silos=2, workdir=folder, timeout=300)


BACKGROUND_JOBS = {"flower-loopback": (_loopback_job, {})}


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_flower_run_ends_with_the_in_process_parameters(background):
    flower = background.result("flower-loopback", BACKGROUND_JOBS["flower-loopback"])
    local = simulate_uefl(n_silos=2, config=CONFIG, baselines=()).methods["uefl"]
    assert sorted(flower.weights) == sorted(local.weights)
    assert not any(k.startswith("vq.books") for k in flower.weights)  # codebooks stay on nodes
    for key, value in local.weights.items():
        assert np.allclose(flower.weights[key], value, rtol=0, atol=1e-6), key
    # Same decisions: the silo above the threshold got codebook 1 (k-means on its node).
    assert flower.state.extensions[0]["flagged"] == local.extensions[0]["flagged"]
    assert flower.state.book_idx == local.book_idx[-1].tolist()
    assert max(flower.state.book_idx) == 1
    assert np.allclose(flower.state.history[-1]["entropy"], local.entropy[-1], atol=1e-9)
    assert sorted(flower.nodes.values()) == [0, 1]


@pytest.mark.timeout(120)
def test_an_unreachable_superlink_fails_fast_naming_it(tmp_path):
    import socket

    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = write_flower_app(tmp_path / "app", CONFIG, n_silos=2, result_dir=tmp_path / "out")
    with pytest.raises(
        BackendError, match=rf"superlink: no Flower SuperLink answers at 127\.0\.0\.1:{port}"
    ):
        run_flower_app(app, f"127.0.0.1:{port}", connect_timeout=2)


def test_the_app_project_passes_flowers_own_validation(tmp_path):
    from flwr.cli.config_utils import load_and_validate

    app = write_flower_app(tmp_path, CONFIG, n_silos=4, shift="mixed")
    config, _ = load_and_validate(app.pyproject, check_module=True)
    run_config = config["tool"]["flwr"]["app"]["config"]
    assert run_config["num-silos"] == 4 and run_config["shift"] == "mixed"
    assert UEFLConfig.from_dict(run_config) == CONFIG


def test_nodes_of_an_mnist_app_build_the_mnist_silo_of_their_index(tmp_path):
    from types import SimpleNamespace

    from flwr.cli.config_utils import load_and_validate

    from trustlab.federated import make_mnist_silos
    from trustlab.federated.flower import _node_setup

    app = write_flower_app(tmp_path, CONFIG, n_silos=5, data="mnist")
    config, _ = load_and_validate(app.pyproject, check_module=True)
    run_config = config["tool"]["flwr"]["app"]["config"]
    assert run_config["data"] == "mnist" and run_config["num-features"] == 196
    node = {"partition-id": 4, "num-partitions": 5}
    index, silo, cfg, _ = _node_setup(SimpleNamespace(run_config=run_config, node_config=node))
    expected = make_mnist_silos(5, random_state=CONFIG.random_state)[4]
    assert index == 4 and cfg == CONFIG
    assert np.array_equal(silo.X_train, expected.X_train)
    assert np.array_equal(silo.y_test, expected.y_test)
