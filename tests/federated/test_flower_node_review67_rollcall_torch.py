"""Review 67: the roll call (the query message before round 1) imports no torch on its node.

Every Flower message starts a fresh ClientApp process. The roll call only checks the node's
configs and data and answers its partition-id, yet it put torch on one thread first, importing
torch (about 1.5 s of CPU a node, measured: 2 of the 10 ClientApp processes of the loopback
test). Train and evaluate need torch and still set its threads.

Second reader K of 1056c866: asking ``require`` for no torch is not enough; an ``import torch``
anywhere else on the roll call's path (the configs, the silo built from a shift preset, a
node's own data file) would still cost the process the import it saves. The last tests make
torch unimportable (``sys.modules["torch"] = None``) while the roll call answers, for each
shift preset and for a data-path node; on 1056c866^ each stopped on the setup's
``require("torch")``."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("flwr")

from trustlab.federated import UEFLConfig  # noqa: E402


@pytest.fixture
def requested(monkeypatch):
    """The packages the flower module asks ``require`` for, in order."""
    import trustlab.federated.flower as flower

    asked: list[str] = []
    real = flower.require

    def require(name, *args, **kwargs):
        asked.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(flower, "require", require)
    return asked


def _context(run_extra=None, node_extra=None):
    from flwr.app import Context, RecordDict

    run_config = {k: v for k, v in UEFLConfig().to_dict().items() if v is not None}
    run_config.update({"num-silos": 3, **(run_extra or {})})
    node_config = {"partition-id": 2, "num-partitions": 3, **(node_extra or {})}
    return Context(run_id=1, node_id=7, node_config=node_config, state=RecordDict(),
                   run_config=run_config)  # fmt: skip


def _roll_call(context):
    """The partition-id the roll call (the query message) answers."""
    from flwr.app import Message, RecordDict

    from trustlab.federated.flower import _client_query

    query = Message(content=RecordDict({}), message_type="query", dst_node_id=7)
    return int(_client_query(query, context).content["metrics"]["partition-id"])


@pytest.fixture
def identity():
    """The task identity a ClientApp process has (Message() asks for it)."""
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 7, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


def test_the_roll_call_asks_for_no_torch(requested, identity):
    assert _roll_call(_context()) == 2
    assert "torch" not in requested


def test_train_and_evaluate_setup_still_puts_torch_on_one_thread(requested):
    import torch

    from trustlab.federated.flower import _node_setup

    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        index, silo, cfg, num_classes = _node_setup(_context())
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    assert requested == ["torch"]
    assert (index, num_classes, cfg) == (2, 10, UEFLConfig())


@pytest.mark.parametrize("shift", ["rotation", "mixed", "none"])
def test_the_roll_call_answers_without_torch(identity, monkeypatch, shift):
    import trustlab.federated.flower  # noqa: F401  (imported before torch is blocked)

    monkeypatch.setitem(sys.modules, "torch", None)  # any import of torch now fails
    assert _roll_call(_context({"shift": shift})) == 2


def test_a_data_path_node_answers_without_torch(identity, monkeypatch, tmp_path):
    import trustlab.federated.flower  # noqa: F401

    rng = np.random.default_rng(0)
    y = np.arange(12) % 10
    path = tmp_path / "silo.npz"
    np.savez(path, X_train=rng.random((12, 64)), y_train=y, X_test=rng.random((12, 64)), y_test=y)
    monkeypatch.setitem(sys.modules, "torch", None)
    assert _roll_call(_context(node_extra={"data-path": str(path)})) == 2
