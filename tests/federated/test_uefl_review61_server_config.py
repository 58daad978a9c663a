"""Review 61: the ServerApp reads node-timeout from the run config, which an edited
pyproject.toml or ``flwr run --run-config "node-timeout=nan"`` can change after
write_flower_app checked it. NaN and inf waited for the SuperNodes for good (NaN never passes a
deadline), "x" was a raw ValueError and -1 failed blaming num-silos "within -1 s"."""

import math

import pytest

from trustlab.errors import BackendError, InputError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.federated import flower  # noqa: E402


class _NoNodes:
    """A grid where no SuperNode ever connects; it gives up after 200 looks, so a wait that
    never times out fails the test instead of hanging it."""

    def __init__(self):
        self.looks = 0

    def get_node_ids(self):
        self.looks += 1
        if self.looks > 200:
            raise RuntimeError("the ServerApp kept waiting for nodes")
        return []


def _serve(timeout):
    context = Context(run_id=1, node_id=0, node_config={}, state=RecordDict(),
                      run_config={"num-silos": 2, "node-timeout": timeout})  # fmt: skip
    flower._server_main(_NoNodes(), context)


@pytest.mark.parametrize("timeout", [math.nan, math.inf, -1.0, 0, "x", True])
def test_a_node_timeout_that_is_not_positive_seconds_is_refused_by_name(timeout, monkeypatch):
    monkeypatch.setattr(flower.time, "sleep", lambda seconds: None)
    with pytest.raises(InputError, match=r"^node-timeout: expected a number"):
        _serve(timeout)


def test_a_positive_node_timeout_still_waits_and_names_num_silos(monkeypatch):
    wait = flower.time.sleep
    monkeypatch.setattr(flower, "_one_thread", lambda: None)  # no torch import (seconds)
    monkeypatch.setattr(flower.time, "sleep", lambda seconds: wait(0.002))  # 200 looks: 0.2 s
    with pytest.raises(BackendError, match=r"^num-silos: expected 2 SuperNodes.* within 0.01 s"):
        _serve(0.01)
