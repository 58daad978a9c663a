"""Review 67: the ServerApp reads num-silos from the run config, which a hand-edited
pyproject.toml can lack. Measured on the old flower.py: _server_main with a run config without
num-silos stopped on a raw "KeyError: 'num-silos'" (nothing named the setting). Now an
InputError naming num-silos before any node is waited for; a given num-silos is read as before
(review 61's tests reach the wait for nodes with it)."""

import pytest

from trustlab.errors import InputError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.federated import flower  # noqa: E402


class _Grid:
    """A grid the server must not reach before it has read num-silos."""

    def get_node_ids(self):
        raise AssertionError("the ServerApp waited for nodes without num-silos")


@pytest.mark.parametrize("config", [{}, {"node-timeout": 1.0}, {"rounds": 1}])
def test_a_run_config_without_num_silos_is_refused_by_name(config):
    context = Context(run_id=1, node_id=0, node_config={}, state=RecordDict(), run_config=config)
    with pytest.raises(InputError, match=r"^num-silos: expected the run config's number") as e:
        flower._server_main(_Grid(), context)
    assert e.value.argument == "num-silos"
