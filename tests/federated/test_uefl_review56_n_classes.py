"""Review 56: federated said num_classes / num_features (and flower-app --num-classes,
--num-features) where the rest of trustlab says n_<thing>. The new names work; the old ones still
work for one release with a FutureWarning; both together are refused naming the old one."""

import tomllib

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.federated import InProcessEngine, UEFLConfig, initial_weights, write_flower_app


def _config(app):
    return tomllib.loads(app.pyproject.read_text())["tool"]["flwr"]["app"]["config"]


def test_write_flower_app_takes_n_features_and_n_classes(tmp_path):
    new = write_flower_app(tmp_path / "new", n_features=144, n_classes=12)
    with pytest.warns(FutureWarning) as caught:
        old = write_flower_app(tmp_path / "old", num_features=144, num_classes=12)
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "num_classes is deprecated; use n_classes",
        "num_features is deprecated; use n_features",
    ]
    assert _config(new) == _config(old) | {"result-dir": _config(new)["result-dir"]}
    assert (_config(new)["num-features"], _config(new)["num-classes"]) == (144, 12)
    with pytest.raises(InputError, match="^num_classes: expected n_classes only"):
        write_flower_app(tmp_path / "both", n_classes=12, num_classes=12)


def test_model_spec_initial_weights_and_the_engine_take_the_new_names():
    cfg = UEFLConfig(encoder="mlp", dim=4, hidden=8, n_codes=4)
    assert cfg.model_spec(n_features=6, n_classes=3) == cfg.model_spec(6, 3)
    with pytest.warns(FutureWarning, match="^num_features is deprecated; use n_features$"):
        assert cfg.model_spec(num_features=6, n_classes=3) == cfg.model_spec(6, 3)
    new = initial_weights(cfg, n_features=6, n_classes=3)
    with pytest.warns(FutureWarning, match="^num_classes is deprecated; use n_classes$"):
        old = initial_weights(cfg, n_features=6, num_classes=3)
    assert new.keys() == old.keys() and all(np.array_equal(new[k], old[k]) for k in new)
    assert InProcessEngine([], cfg, n_classes=3).n_classes == 3
    with pytest.warns(FutureWarning, match="^num_classes is deprecated"):
        assert InProcessEngine([], cfg, num_classes=3).n_classes == 3
    with pytest.raises(InputError, match="^num_features: expected n_features only"):
        cfg.model_spec(num_features=6, n_features=6, n_classes=3)


@pytest.mark.parametrize(("new", "old"), [("--n-classes", "--num-classes"),
                                          ("--n-features", "--num-features")])  # fmt: skip
def test_flower_app_options(tmp_path, capsys, new, old):
    base = ["federated", "flower-app", "--encoder", "mlp", "--json"]
    code, out, _ = run_main(["federated", "flower-app", "--help"], capsys)
    assert code == 0 and new in out and old not in out
    code, _, err = run_main([*base, "--out", tmp_path / "new", new, "12"], capsys)
    assert (code, err) == (0, "")
    with pytest.warns(FutureWarning, match=f"^{old} is deprecated; use {new}$"):
        code, _, _ = run_main([*base, "--out", tmp_path / "old", old, "12"], capsys)
    assert code == 0
    read = [(tmp_path / d / "pyproject.toml").read_text() for d in ("new", "old")]
    assert read[0].replace(str(tmp_path / "new"), "") == read[1].replace(str(tmp_path / "old"), "")
    code, out, err = run_main([*base, "--out", tmp_path / "both", new, "12", old, "12"], capsys)
    assert (code, out) == (2, "")
    assert one_line(err).startswith(f"trustlab: error: {old}: expected {new} only")
    assert not (tmp_path / "both").exists()
