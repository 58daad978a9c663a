"""Diff review 65 P of 689e3740: a node's run-config ``shift`` preset is named ``shift``.

689e3740 made make_silos name an unknown preset ``shifts`` (its argument); the Flower node
builds its silo from the run config's ``shift`` key, so its error must keep that name."""

import pytest

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.errors import InputError  # noqa: E402
from trustlab.federated.flower import _node_setup  # noqa: E402


def test_an_unknown_run_config_shift_names_shift():
    run_config = {"num-silos": 3, "data": "digits", "num-features": 64, "num-classes": 10,
                  "shift": "zoom"}  # fmt: skip
    ctx = Context(run_id=1, node_id=7, node_config={"partition-id": 0}, state=RecordDict(),
                  run_config=run_config)  # fmt: skip
    with pytest.raises(InputError, match=r"^shift: expected one of 'rotation'.*got 'zoom'"):
        _node_setup(ctx)
