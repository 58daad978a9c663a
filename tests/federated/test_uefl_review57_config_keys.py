"""Review 57: UEFLConfig.from_dict skipped every key it did not know, so a misspelt setting (in a
Flower app's run config or a saved config) silently ran with the default. An unknown key is now an
InputError naming it, listing the settings and suggesting the close one; the other keys of a run
config and the old names lr / seed (files written before af97f81) still read."""

import tomllib

import pytest

from trustlab.errors import InputError
from trustlab.federated import UEFLConfig, write_flower_app


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [({"max_iter": 2}, "'max_iterations'"), ({"rounds-pls": 2}, "'rounds-plus'")],
)
def test_a_misspelt_key_is_refused_naming_it_and_the_settings(typo, suggestion):
    key = next(iter(typo))
    with pytest.raises(InputError) as caught:
        UEFLConfig.from_dict({"rounds": 3, **typo})
    message = str(caught.value)
    assert message.startswith("config: expected UEFLConfig settings (rounds, rounds_plus,")
    assert "max_iterations" in message and "random_state" in message
    assert message.endswith(f"got unknown key {key!r} (did you mean {suggestion}?)")


def test_a_written_app_config_reads_back_and_a_typo_in_it_is_refused(tmp_path):
    config = UEFLConfig(rounds=2, rounds_plus=1, learning_rate=0.01, random_state=4)
    app = write_flower_app(tmp_path / "app", config, n_silos=3, n_classes=10)
    run_config = tomllib.loads(app.pyproject.read_text())["tool"]["flwr"]["app"]["config"]
    assert UEFLConfig.from_dict(run_config) == config  # num-silos, num-classes, ... are skipped
    run_config["round"] = run_config.pop("rounds")
    with pytest.raises(InputError, match=r"unknown key 'round' \(did you mean 'rounds'\?\)$"):
        UEFLConfig.from_dict(run_config)
    # Only the run config's own spelling is skipped: num_classes is no setting of UEFLConfig.
    with pytest.raises(InputError, match="got unknown key 'num_classes'"):
        UEFLConfig.from_dict({"rounds": 2, "num_classes": 5})


def test_a_config_written_with_the_first_names_still_loads():
    # The run config of an app written by the first release (lr and seed, no data key).
    old = {"rounds": 2, "rounds-plus": 1, "local-epochs": 1, "mc-passes": 4,
           "threshold-factor": 0.3, "threshold-reference": "mean", "max-iterations": 2,
           "n-codes": 8, "dim": 8, "seg": 2, "hidden": 16, "dropout": 0.1, "commitment": 0.25,
           "lr": 0.01, "batch-size": 16, "weighting": "uniform", "codebook-sharing": "local",
           "authors-compat": False, "encoder": "cnn", "first-book-init": "kmeans", "seed": 7,
           "evaluate-every-round": True, "num-silos": 3, "shift": "rotation",
           "num-features": 64, "num-classes": 10, "node-timeout": 600.0, "result-dir": ""}  # fmt: skip
    with pytest.warns(FutureWarning) as caught:
        config = UEFLConfig.from_dict(old)
    assert sorted(str(w.message) for w in caught) == [
        "lr is deprecated; use learning_rate",
        "seed is deprecated; use random_state",
    ]
    assert (config.learning_rate, config.random_state, config.rounds) == (0.01, 7, 2)
    with pytest.raises(InputError, match="^seed: expected random_state only"):
        UEFLConfig.from_dict({"seed": 1, "random_state": 1})


def test_a_key_like_no_setting_is_refused_and_a_run_config_typo_gets_its_suggestion():
    # e0aceef raised IndexError for a dashed key without a close setting.
    with pytest.raises(
        InputError, match=r"a Flower run config also holds data, .*got unknown key 'zz-zz'$"
    ):
        UEFLConfig.from_dict({"zz-zz": 1})
    with pytest.raises(
        InputError, match=r"got unknown key 'num-clases' \(did you mean 'num-classes'\?\)$"
    ):
        UEFLConfig.from_dict({"num-clases": 10})
