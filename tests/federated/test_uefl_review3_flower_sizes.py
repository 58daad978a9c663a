"""Review 3: a Flower app whose model does not fit the silos its nodes build is refused naming
the setting (a node without a data-path failed inside the ClientApp with a raw shape error), and
a result-dir that is a file is refused when the app is written, not after the whole run."""

import pytest

from trustlab.errors import InputError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.federated import UEFLConfig, write_flower_app  # noqa: E402
from trustlab.federated.flower import _node_setup  # noqa: E402


def _context(**run_config):
    run_config = {"num-silos": 2, "data": "digits", **run_config}
    return Context(run_id=1, node_id=7, node_config={"partition-id": 1, "num-partitions": 2},
                   state=RecordDict(), run_config=run_config)  # fmt: skip


def test_a_built_silo_of_the_apps_sizes_is_accepted():
    index, silo, _, classes = _node_setup(_context(**{"num-features": 64, "num-classes": 10}))
    assert (index, silo.num_features, classes) == (1, 64, 10)


def test_a_model_with_other_features_than_the_built_silo_is_refused():
    with pytest.raises(InputError, match=r"num-features: expected 64 \(the digits silos"):
        _node_setup(_context(**{"num-features": 196, "num-classes": 10}))


def test_a_model_with_fewer_classes_than_the_built_silo_is_refused():
    with pytest.raises(InputError, match=r"num-classes: expected at least 10 .*, got 5$"):
        _node_setup(_context(**{"num-features": 64, "num-classes": 5}))


def test_a_result_dir_that_is_a_file_is_refused_when_the_app_is_written(tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    with pytest.raises(InputError, match="result_dir"):
        write_flower_app(tmp_path / "app", UEFLConfig(), n_silos=2, result_dir=blocker / "res")
    assert not (tmp_path / "app").exists()
