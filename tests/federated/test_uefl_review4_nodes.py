"""Review 4: a Flower node that does not belong to the app's split is refused before training
(a data-path node with a partition-id outside the silos trained a round and failed only at the
server; a node whose num-partitions differs from the app's num-silos built a silo of another
split without a word), and the printed launch command quotes the app directory."""

import shlex

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.federated import write_flower_app  # noqa: E402
from trustlab.federated.flower import _node_setup  # noqa: E402


def _context(node_config):
    run_config = {"num-silos": 3, "data": "digits", "num-features": 64, "num-classes": 10}
    return Context(run_id=1, node_id=7, node_config=node_config, state=RecordDict(),
                   run_config=run_config)  # fmt: skip


def _silo_file(path):
    rng = np.random.default_rng(0)
    y = np.arange(12) % 10
    np.savez(path, X_train=rng.random((12, 64)), y_train=y, X_test=rng.random((4, 64)),
             y_test=y[:4])  # fmt: skip
    return str(path)


@pytest.mark.parametrize("index", [3, 5, -1])
def test_a_data_path_node_outside_the_silos_is_refused(tmp_path, index):
    node = {"partition-id": index, "num-partitions": 3, "data-path": _silo_file(tmp_path / "s.npz")}
    with pytest.raises(
        InputError, match=rf"partition-id: expected a silo index in 0\.\.2, got {index}$"
    ):
        _node_setup(_context(node))


def test_a_data_path_node_inside_the_silos_is_accepted(tmp_path):
    node = {"partition-id": 2, "num-partitions": 3, "data-path": _silo_file(tmp_path / "s.npz")}
    assert _node_setup(_context(node))[0] == 2


@pytest.mark.parametrize("partitions", [2, 5])
def test_a_node_of_another_split_is_refused(partitions):
    node = {"partition-id": 1, "num-partitions": partitions}
    with pytest.raises(
        InputError, match=rf"num-partitions: expected 3 \(the app's num-silos\), got {partitions}$"
    ):
        _node_setup(_context(node))


def test_the_printed_run_command_quotes_the_app_directory(tmp_path):
    app = write_flower_app(tmp_path / "my app", n_silos=2)
    run = app.commands.splitlines()[-1]
    assert shlex.split(run) == ["flwr", "run", str(tmp_path / "my app"), "loopback", "--stream"]
