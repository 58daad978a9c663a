"""Review 4: UEFLSimulation.margins names a baseline that was not run (a raw KeyError), and
write_flower_app refuses a node_timeout that is not a positive finite number of seconds (NaN
was written to the app, where the ServerApp never timed out; -5 and 0 failed at once)."""

import math

import pytest

from trustlab.errors import InputError
from trustlab.federated import simulate_uefl


@pytest.fixture(scope="module")
def small_run():
    return simulate_uefl(n_silos=2, rounds=1, rounds_plus=1, local_epochs=1, mc_passes=2,
                         max_iterations=1, random_state=0)  # fmt: skip


@pytest.mark.parametrize("baseline", ["vq", "uefl", "FedAvg"])
def test_margins_against_a_baseline_that_was_not_run_name_the_run_ones(small_run, baseline):
    with pytest.raises(
        InputError, match=r"baseline: expected a baseline of this simulation: 'fedavg'"
    ):
        small_run.margins(baseline)


def test_margins_against_a_run_baseline_still_work(small_run):
    assert set(small_run.margins("fedavg")) >= {"accuracy", "entropy"}


@pytest.mark.parametrize("timeout", [math.nan, math.inf, -5, 0, "abc", True])
def test_a_node_timeout_that_is_not_positive_seconds_is_refused(tmp_path, timeout):
    pytest.importorskip("flwr")
    from trustlab.federated import write_flower_app

    with pytest.raises(InputError, match=r"^node_timeout: expected a number"):
        write_flower_app(tmp_path / "app", n_silos=2, node_timeout=timeout)
    assert not (tmp_path / "app").exists()


def test_a_positive_node_timeout_is_written(tmp_path):
    pytest.importorskip("flwr")
    from trustlab.federated import write_flower_app

    app = write_flower_app(tmp_path / "app", n_silos=2, node_timeout=30)
    assert "node-timeout = 30.0" in app.pyproject.read_text()
