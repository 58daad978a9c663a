"""Review 53 of UEFL on Flower: before the first round the ServerApp asks every node its
partition-id (a query message); two nodes of one silo, or a silo no node serves, are refused
there, before any silo trains (they both trained a round and failed only at the average)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("flwr")

from trustlab.errors import InputError  # noqa: E402
from trustlab.federated import UEFLConfig  # noqa: E402


def _reply(node_id: int, silo: int):
    from flwr.app import Message, Metadata, MetricRecord, RecordDict

    meta = Metadata(run_id=1, message_id=f"m{node_id}", src_node_id=node_id, dst_node_id=0,
                    reply_to_message_id=f"q{node_id}", group_id="", created_at=0.0, ttl=60.0,
                    message_type="query")  # fmt: skip
    return Message(content=RecordDict({"metrics": MetricRecord({"partition-id": silo})}),
                   metadata=meta)  # fmt: skip


class Grid:
    """Nodes answering the roll call with the given partition-ids; records the message types."""

    def __init__(self, silos: dict[int, int]):
        self.silos, self.sent = silos, []

    def get_node_ids(self):
        return list(self.silos)

    def push_messages(self, messages):
        messages = list(messages)
        self.sent += [m.metadata.message_type for m in messages]
        return [f"q{m.metadata.dst_node_id}" for m in messages]

    def pull_messages(self, ids):
        return [_reply(int(i[1:]), self.silos[int(i[1:])]) for i in ids]


@pytest.fixture
def identity():
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 0, 1
    yield
    TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


def _server_main(grid):
    from flwr.app import Context, RecordDict

    from trustlab.federated.flower import _server_main

    config = UEFLConfig(rounds=1, rounds_plus=1, max_iterations=1, dim=4, seg=1, n_codes=4,
                        hidden=8, first_book_init="normal").to_dict()  # fmt: skip
    run_config = {k: v for k, v in config.items() if v is not None}
    run_config.update({"num-silos": 3, "node-timeout": 5.0})
    context = Context(run_id=1, node_id=0, node_config={}, state=RecordDict(),
                      run_config=run_config)  # fmt: skip
    _server_main(grid, context)


@pytest.mark.parametrize(
    ("silos", "shown"),
    [
        ({11: 0, 12: 0, 13: 1}, "0 on nodes [11, 12]; no node for silo(s) [2]"),
        ({11: 0, 12: 1, 13: 2, 14: 1}, "1 on nodes [12, 14]"),
    ],
)
def test_two_nodes_of_one_silo_are_refused_before_any_round(identity, silos, shown):
    grid = Grid(silos)
    with pytest.raises(InputError, match=r"partition-id: expected each silo 0\.\.2") as err:
        _server_main(grid)
    assert shown in str(err.value)
    assert set(grid.sent) == {"query"}  # no node was sent a training round


def test_the_roll_call_matches_nodes_to_silos(identity):
    from trustlab.federated.flower import FlowerEngine, UEFLStrategy

    strategy = UEFLStrategy(UEFLConfig(), 3)
    FlowerEngine(Grid({21: 2, 22: 0, 23: 1}), strategy, timeout=5.0, poll=0.0).roll_call()
    assert strategy.silo_of == {21: 2, 22: 0, 23: 1}


def test_the_client_answers_the_roll_call_with_its_partition_id(identity):
    from flwr.app import Context, Message, RecordDict

    from trustlab.federated.flower import _client_query

    run_config = {k: v for k, v in UEFLConfig().to_dict().items() if v is not None}
    run_config["num-silos"] = 3
    context = Context(run_id=1, node_id=7, node_config={"partition-id": 2, "num-partitions": 3},
                      state=RecordDict(), run_config=run_config)  # fmt: skip
    query = Message(content=RecordDict({}), message_type="query", dst_node_id=7)
    reply = _client_query(query, context)
    assert int(reply.content["metrics"]["partition-id"]) == 2
    assert np.isfinite(float(reply.content["metrics"]["partition-id"]))
