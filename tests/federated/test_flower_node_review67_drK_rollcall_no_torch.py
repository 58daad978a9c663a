"""Review 67 (second reader K of 1056c866): the roll call runs where torch cannot be imported.

1056c866's test checks that the roll call asks ``require`` for no torch; an ``import torch``
anywhere else on the roll call's path (the configs, the silo built from a shift preset, a
node's own data file) would still cost the fresh ClientApp process the import it saves. Here
torch is made unimportable (``sys.modules["torch"] = None``) while the roll call answers, for
each shift preset and for a data-path node. On 1056c866^ each case stopped on the setup's
``require("torch")``."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("flwr")

from trustlab.federated import UEFLConfig  # noqa: E402


@pytest.fixture
def identity():
    """The task identity a ClientApp process has (Message() asks for it)."""
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 7, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


def _roll_call(run_extra, node_extra):
    from flwr.app import Context, Message, RecordDict

    from trustlab.federated.flower import _client_query

    run_config = {k: v for k, v in UEFLConfig().to_dict().items() if v is not None}
    run_config.update({"num-silos": 3, **run_extra})
    context = Context(run_id=1, node_id=7, state=RecordDict(), run_config=run_config,
                      node_config={"partition-id": 2, "num-partitions": 3, **node_extra})  # fmt: skip
    query = Message(content=RecordDict({}), message_type="query", dst_node_id=7)
    return int(_client_query(query, context).content["metrics"]["partition-id"])


@pytest.mark.parametrize("shift", ["rotation", "mixed", "none"])
def test_the_roll_call_answers_without_torch(identity, monkeypatch, shift):
    import trustlab.federated.flower  # noqa: F401  (imported before torch is blocked)

    monkeypatch.setitem(sys.modules, "torch", None)  # any import of torch now fails
    assert _roll_call({"shift": shift}, {}) == 2


def test_a_data_path_node_answers_without_torch(identity, monkeypatch, tmp_path):
    import trustlab.federated.flower  # noqa: F401

    rng = np.random.default_rng(0)
    y = np.arange(12) % 10
    path = tmp_path / "silo.npz"
    np.savez(path, X_train=rng.random((12, 64)), y_train=y, X_test=rng.random((12, 64)), y_test=y)
    monkeypatch.setitem(sys.modules, "torch", None)
    assert _roll_call({}, {"data-path": str(path)}) == 2
