"""A Flower node's silo must fit the model the ServerApp builds from the run config: a node's
own data (data-path) with other feature or class counts, or a partition-id outside the
partitions, is refused naming the setting, before any training."""

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.federated.flower import _node_setup  # noqa: E402


def _context(node_config, **run_config):
    run_config = {"num-silos": 2, "num-features": 64, "num-classes": 10, **run_config}
    return Context(run_id=1, node_id=7, node_config=node_config, state=RecordDict(),
                   run_config=run_config)  # fmt: skip


def _silo_file(path, features=64, top_label=9):
    rng = np.random.default_rng(0)
    y = np.arange(12) % (top_label + 1)
    np.savez(path, X_train=rng.random((12, features)), y_train=y,
             X_test=rng.random((4, features)), y_test=y[:4])  # fmt: skip
    return str(path)


def test_a_node_file_of_the_apps_sizes_is_accepted(tmp_path):
    index, silo, _, classes = _node_setup(
        _context({"partition-id": 1, "data-path": _silo_file(tmp_path / "s.npz")})
    )
    assert (index, silo.num_features, classes) == (1, 64, 10)


def test_a_node_file_with_other_features_is_refused(tmp_path):
    path = _silo_file(tmp_path / "s.npz", features=100)
    with pytest.raises(InputError, match=r"data-path: expected 64 features.*, got 100$"):
        _node_setup(_context({"partition-id": 0, "data-path": path}))


def test_a_node_file_with_labels_beyond_num_classes_is_refused(tmp_path):
    path = _silo_file(tmp_path / "s.npz", top_label=11)
    with pytest.raises(InputError, match=r"data-path: expected labels 0\.\.9 .*, got 11$"):
        _node_setup(_context({"partition-id": 0, "data-path": path}))


def test_a_partition_id_outside_the_partitions_is_refused():
    with pytest.raises(InputError, match=r"partition-id: expected a silo index in 0\.\.1"):
        _node_setup(_context({"partition-id": 2, "num-partitions": 2}))
