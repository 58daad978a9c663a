"""Review 67 of two UEFL inputs: a SiloState without a codebook mapping, and k-means features
past float32's range.

Measured on the old files (a 12-row silo of 8 features, encoder="mlp"): train_silo and
evaluate_silo with SiloState(codebooks=None) stopped on a raw "TypeError: 'NoneType' object is
not a mapping" (a list or a string the same). kmeans_codebook([[1e39, 0], [0, 1], [2e39, 1]], 2)
returned a float32 codebook holding inf with only numpy's "RuntimeWarning: overflow encountered
in cast". Now both are InputErrors naming state.codebooks / features; a dict of codebooks and
features within float32's range work as before."""

import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import Silo, UEFLConfig, initial_weights
from trustlab.federated.uefl import (
    SiloPlan,
    SiloState,
    evaluate_silo,
    kmeans_codebook,
    train_silo,
)

torch = pytest.importorskip("torch")

CFG = UEFLConfig(encoder="mlp", local_epochs=1, mc_passes=2, n_codes=4, dim=8, seg=2)


def _silo():
    rng = np.random.default_rng(0)
    y = np.arange(12) % 3
    return Silo(rng.random((12, 8), np.float32), y, rng.random((12, 8), np.float32), y)


def _shared():
    return {k: v for k, v in initial_weights(CFG, 8, 3).items() if not k.startswith("vq.books")}


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("books", [None, [1, 2], "ab"])
@pytest.mark.parametrize("run", [train_silo, evaluate_silo])
def test_a_state_without_a_codebook_mapping_is_refused(run, books):
    with pytest.raises(InputError, match=r"^state\.codebooks: expected a mapping") as e:
        run(_shared(), SiloState(codebooks=books), _silo(), SiloPlan(0), CFG, 1, n_classes=3)
    assert e.value.argument == "state.codebooks"


def test_a_state_of_a_dict_trains_as_before():
    update, state = train_silo(_shared(), SiloState({}), _silo(), SiloPlan(0), CFG, 1, n_classes=3)
    again, _ = train_silo(_shared(), SiloState(), _silo(), SiloPlan(0), CFG, 1, n_classes=3)
    assert update.metrics == again.metrics and isinstance(state.codebooks, dict)


@pytest.mark.parametrize("top", [1e39, -2e39, 1e300])
def test_features_past_float32_are_refused(top):
    features = np.array([[top, 0.0], [0.0, 1.0], [2 * top, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was an overflow warning and inf codewords
        with pytest.raises(InputError, match=r"^features: expected values within float32") as e:
            kmeans_codebook(features, 2)
    assert e.value.argument == "features"


def test_features_within_float32_give_finite_codewords():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        book = kmeans_codebook(np.array([[3e38, 0.0], [0.0, 1.0], [3.4e38, 1.0]]), 2)
    assert np.isfinite(book).all()
    assert sorted(book[:, 0].tolist()) == pytest.approx([0.0, 3.2e38])
