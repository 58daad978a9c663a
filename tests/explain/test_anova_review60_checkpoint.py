"""ANOVA-TPNN fits save their training state (``checkpoint_dir``) after every epoch (review 60):
an interrupted fit lost every finished epoch (the CLI runs fits of up to about two hours). A refit
with the same folder resumes and ends bit for bit where an uninterrupted fit ends, through
learning-rate cuts and early stopping; a folder left by other data or settings is refused."""

import numpy as np
import pytest
from test_anova_tpnn import _one_torch_thread  # noqa: F401  (torch on one thread, autouse)

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN

# 40 rows (nothing held out) and a large step: 7 epochs, the rate cut after epoch 6 (0.2 ->
# 0.06), the plateau after it stops training at epoch 7, the best epoch is 5.
SETTINGS = {"order": 2, "n_basis": 3, "max_epochs": 8, "patience": 1, "n_decays": 1,
            "batch_size": 16, "learning_rate": 0.2, "random_state": 0, "n_jobs": 1}  # fmt: skip


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 2))
    return X, np.sin(3 * X[:, 0]) + X[:, 0] * X[:, 1]


@pytest.fixture(scope="module")
def whole(data):
    model = ANOVATPNN(**SETTINGS).fit(*data)
    assert model.history_["n_epochs"] == 7 and model.history_["best_epoch"] == 5
    assert model.history_["learning_rate"][-1] < SETTINGS["learning_rate"]  # a cut happened
    return model


class Stop(Exception):
    pass


def _stop_after(k):
    def progress(epoch, total, loss):
        if epoch == k:
            raise Stop

    return progress


def _same_model(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.components(X).values, b.components(X).values)
    assert a.history_ == b.history_


@pytest.mark.parametrize("k", [2, 6, 7])  # before the cut, the epoch of the cut, the last one
def test_an_interrupted_fit_resumes_to_the_same_model(data, whole, tmp_path, k):
    with pytest.raises(Stop):
        ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path).fit(*data, progress=_stop_after(k))
    assert (tmp_path / "state.pt").is_file()
    epochs = []
    model = ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path)
    model.fit(*data, progress=lambda epoch, total, loss: epochs.append(epoch))
    assert epochs == [0, *range(k + 1, 8)]  # only the epochs not done before
    _same_model(model, whole, data[0])


def test_a_state_of_other_data_or_settings_is_refused(data, whole, tmp_path):
    X, y = data
    with pytest.raises(Stop):
        ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path).fit(X, y, progress=_stop_after(2))
    for other, args in [({}, (X, y + 1.0)), ({}, (X[:, ::-1], y)), ({"learning_rate": 0.1}, data)]:
        model = ANOVATPNN(**{**SETTINGS, **other}, checkpoint_dir=tmp_path)
        with pytest.raises(InputError, match="^checkpoint_dir: .*same fit"):
            model.fit(*args)
    # n_jobs says how to run, not what to learn: the state is resumed
    epochs = []
    model = ANOVATPNN(**{**SETTINGS, "n_jobs": 2}, checkpoint_dir=tmp_path)
    model.fit(X, y, progress=lambda epoch, total, loss: epochs.append(epoch))
    assert epochs == [0, 3, 4, 5, 6, 7]


def test_a_finished_state_gives_the_same_model_and_only_for_the_same_data(data, whole, tmp_path):
    X, y = data
    ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path).fit(X, y)
    epochs = []
    model = ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path)
    model.fit(X, y, progress=lambda epoch, total, loss: epochs.append(epoch))
    assert epochs == [0]  # nothing left to train
    _same_model(model, whole, X)
    with pytest.raises(InputError, match="^checkpoint_dir:"):
        ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path).fit(X * 2, y)


def test_checkpoint_dir_is_checked_and_not_saved(data, whole, tmp_path):
    for bad in (5, str(tmp_path / "f" / "s")):
        (tmp_path / "f").write_text("a file")
        with pytest.raises(InputError, match="^checkpoint_dir: "):
            ANOVATPNN(**SETTINGS, checkpoint_dir=bad).fit(*data)
    model = ANOVATPNN(**SETTINGS, checkpoint_dir=tmp_path / "s").fit(*data)
    assert model.get_params()["checkpoint_dir"] == tmp_path / "s"
    loaded = ANOVATPNN.load(model.save(tmp_path / "m"))
    assert loaded.checkpoint_dir is None
    _same_model(loaded, whole, data[0])
