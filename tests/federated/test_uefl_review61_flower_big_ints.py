"""Review 61: write_flower_app wrote UEFLConfig(random_state=2**64) (a SeedSequence entropy is
a 128-bit int) into the run config, which Flower carries as 64-bit integers: the app was
written, and the run failed when Flower serialised its context ("ValueError: Value out of
range", naming no setting). Such a value is now refused when the app is written."""

import tomllib

import pytest

from trustlab.errors import InputError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402
from flwr.common.serde import context_to_proto  # noqa: E402

from trustlab.federated import UEFLConfig, write_flower_app  # noqa: E402


def test_a_seed_beyond_64_bits_is_refused_when_the_app_is_written(tmp_path):
    with pytest.raises(
        InputError, match=r"^config\.random_state: expected an integer below 2\*\*63"
    ):
        write_flower_app(tmp_path, UEFLConfig(random_state=2**64), n_silos=2)
    assert not (tmp_path / "pyproject.toml").exists()


def test_the_largest_64_bit_seed_is_written_and_travels_in_a_flower_context(tmp_path):
    app = write_flower_app(tmp_path, UEFLConfig(random_state=2**63 - 1), n_silos=2)
    run_config = tomllib.loads(app.pyproject.read_text())["tool"]["flwr"]["app"]["config"]
    assert run_config["random-state"] == 2**63 - 1
    context = Context(run_id=1, node_id=0, node_config={}, state=RecordDict(),
                      run_config=run_config)  # fmt: skip
    context_to_proto(context)  # what Flower does to hand the ServerApp its run config
