"""Review pass 64: ``safety transfer vector/fit-map/apply/switch`` refuse option values that need
no model before the model loads (``report`` and ``backdoor-model`` already did): a typo in
--positions, --steer-at, --scale, --max-new-tokens or a negative layer cost a model load first
(11-15 s for a tiny saved model here, longer for SmolLM2) before the same one-line error."""

from __future__ import annotations

import numpy as np
import pytest

import trustlab.cli.safety_transfer as cli
from cli_helpers import one_line, run_main
from trustlab.safety.transfer import ActivationMap, SteeringVector


@pytest.fixture
def no_load(monkeypatch):
    """A model load fails the test (none is needed to refuse these options)."""

    def load(name):
        raise AssertionError(f"the model {name!r} was loaded before the options were checked")

    monkeypatch.setattr(cli, "_model", load)


@pytest.fixture
def saved(tmp_path):
    """A saved 4-wide steering vector (layer 0) and a saved 4 -> 4 affine map (layers 0, 0)."""
    vector = SteeringVector(vector=np.ones(4), layer=0, kind="prompt", model="m", n_pairs=1,
                            n_positive=1, n_negative=1)  # fmt: skip
    vector.save(tmp_path / "v")
    rows = np.random.default_rng(0).normal(size=(12, 4))
    fitted = ActivationMap(kind="affine").fit(
        rows, rows, source_model="m", target_model="m", source_layer=0, target_layer=0
    )
    fitted.save(tmp_path / "map")
    return tmp_path


CASES = [
    (["vector", "--model", "m", "--layer", "0", "--out", "{o}", "--positions", "middle"],
     "--positions"),
    (["vector", "--model", "m", "--layer", "-1", "--out", "{o}"], "--layer"),
    (["fit-map", "--source", "m", "--target", "m", "--source-layer", "-1", "--target-layer", "0",
      "--out", "{o}", "--kind", "affine"], "--source-layer"),
    (["fit-map", "--source", "m", "--target", "m", "--source-layer", "0", "--target-layer", "-2",
      "--out", "{o}", "--kind", "affine"], "--target-layer"),
    (["apply", "p q", "--vector", "{v}", "--model", "m", "--scale", "nan"], "--scale"),
    (["apply", "p q", "--vector", "{v}", "--model", "m", "--scale", "1e300"], "--scale"),
    (["apply", "p q", "--vector", "{v}", "--model", "m", "--steer-at", "first"], "--steer-at"),
    (["apply", "p q", "--vector", "{v}", "--model", "m", "--max-new-tokens", "0"],
     "--max-new-tokens"),
    (["switch", "p q", "--map", "{m}", "--model", "m", "--max-new-tokens", "0"],
     "--max-new-tokens"),
    (["switch", "p q", "--map", "{m}", "--model", "m", "--layer", "-1"], "--layer"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "option"), CASES)
def test_option_refused_before_the_model_loads(capsys, no_load, saved, args, option):
    paths = {"o": saved / "out", "v": saved / "v", "m": saved / "map"}
    argv = ["safety", "transfer", *(a.format(**paths) for a in args)]
    code, _, err = run_main(argv, capsys)
    assert code == 2, err
    assert one_line(err).startswith(f"trustlab: error: {option}: expected"), err
    assert not (saved / "out").exists()
