"""Review 67: the roll call (the query message before round 1) imports no torch on its node.

Every Flower message starts a fresh ClientApp process. The roll call only checks the node's
configs and data and answers its partition-id, yet it put torch on one thread first, importing
torch (about 1.5 s of CPU a node, measured: 2 of the 10 ClientApp processes of the loopback
test). Train and evaluate need torch and still set its threads."""

from __future__ import annotations

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


def _context():
    from flwr.app import Context, RecordDict

    run_config = {k: v for k, v in UEFLConfig().to_dict().items() if v is not None}
    run_config["num-silos"] = 3
    return Context(run_id=1, node_id=7, node_config={"partition-id": 2, "num-partitions": 3},
                   state=RecordDict(), run_config=run_config)  # fmt: skip


@pytest.fixture
def identity():
    """The task identity a ClientApp process has (Message() asks for it)."""
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 7, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


def test_the_roll_call_asks_for_no_torch(requested, identity):
    from flwr.app import Message, RecordDict

    from trustlab.federated.flower import _client_query

    query = Message(content=RecordDict({}), message_type="query", dst_node_id=7)
    reply = _client_query(query, _context())
    assert int(reply.content["metrics"]["partition-id"]) == 2
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
