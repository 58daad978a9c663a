"""run_flower_app reads only the result of the run it submitted: `flwr run --stream` exits 0
when the ServerApp fails, so a result file an earlier run left in the result-dir must not pass
for this run's."""

import json

import numpy as np
import pytest

from trustlab.errors import BackendError
from trustlab.federated import UEFLConfig, flower_launch
from trustlab.federated.flower import RESULT_ARRAYS, RESULT_JSON
from trustlab.federated.protocol import ProtocolState


def _write_result(folder, rounds):
    folder.mkdir(parents=True, exist_ok=True)
    state = ProtocolState(2, round=rounds, finished=True)
    (folder / RESULT_JSON).write_text(
        json.dumps({"state": state.to_dict(), "seconds": 1.0, "nodes": {}})
    )
    np.savez(folder / RESULT_ARRAYS, w=np.full(1, float(rounds)))


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setattr(flower_launch, "_wait_for_port", lambda *args, **kwargs: None)
    result = tmp_path / "result"
    _write_result(result, rounds=99)  # an earlier run's result
    config = UEFLConfig(rounds=1, max_iterations=1)
    return flower_launch.write_flower_app(tmp_path / "app", config, n_silos=2, result_dir=result)


def test_a_failed_rerun_does_not_return_the_earlier_runs_result(app, monkeypatch):
    # flwr exits 0 and prints the ServerApp's traceback; nothing new is written.
    monkeypatch.setattr(flower_launch, "_flwr_run", lambda *args: "Exit Code: 201 (ServerApp)")
    with pytest.raises(BackendError, match="ended without writing"):
        flower_launch.run_flower_app(app, "127.0.0.1:9093")


def test_a_rerun_returns_its_own_result(app, tmp_path, monkeypatch):
    monkeypatch.setattr(
        flower_launch, "_flwr_run", lambda *args: _write_result(tmp_path / "result", 3) or ""
    )
    result = flower_launch.run_flower_app(app, "127.0.0.1:9093")
    assert result.state.round == 3 and result.weights["w"].tolist() == [3.0]
