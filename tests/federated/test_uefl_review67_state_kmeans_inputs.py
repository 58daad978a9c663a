"""Review 67 of two UEFL inputs: a SiloState without a codebook mapping, and k-means features
past float32's range.

Measured on the old files (a 12-row silo of 8 features, encoder="mlp"): train_silo and
evaluate_silo with SiloState(codebooks=None) stopped on a raw "TypeError: 'NoneType' object is
not a mapping" (a list or a string the same). kmeans_codebook([[1e39, 0], [0, 1], [2e39, 1]], 2)
returned a float32 codebook holding inf with only numpy's "RuntimeWarning: overflow encountered
in cast". Now both are InputErrors naming state.codebooks / features; a dict of codebooks and
features within float32's range work as before.

Second reader K of 4cce36bf: the books in the mapping were checked only when the model has them
(book 0); a book the model lacks (book 1, 2, ...: a silo's extension, in its state or among the
shared arrays) was added as given. Measured on 4cce36bf (plan.book_idx=1):
SiloState({"vq.books.1": None}) or "ab" stopped train_silo and evaluate_silo on torch's raw
"TypeError: can't convert np.ndarray of type numpy.object_" (numpy.str_), a (3, 5) book on
"RuntimeError: Sizes of tensors must match except in dimension 0". Now each is
"arrays['vq.books.1']: expected a codebook of shape (4, 4)"; a book of that shape (a list too)
trains and evaluates as before."""

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


@pytest.mark.parametrize("book", [None, "ab", np.zeros((3, 5)), np.zeros(16)])
@pytest.mark.parametrize("run", [train_silo, evaluate_silo])
def test_an_extension_book_of_another_shape_is_refused(run, book):
    state = SiloState(codebooks={"vq.books.1": book})
    with pytest.raises(InputError, match=r"^arrays\['vq\.books\.1'\]: expected a codebook of "
                       r"shape \(4, 4\)") as e:  # fmt: skip
        run(_shared(), state, _silo(), SiloPlan(0, book_idx=1), CFG, 1, n_classes=3)
    assert e.value.argument == "arrays['vq.books.1']"


def test_an_extension_book_among_the_shared_arrays_is_checked_too():
    shared = {**_shared(), "vq.books.2": np.zeros((4, 3))}
    with pytest.raises(InputError, match=r"^arrays\['vq\.books\.2'\]: expected a codebook"):
        train_silo(shared, SiloState(), _silo(), SiloPlan(0, book_idx=2), CFG, 1, n_classes=3)


def test_an_extension_book_of_the_right_shape_reads_as_before():
    book = np.random.default_rng(1).random((4, 4))
    runs = [
        train_silo(_shared(), SiloState({"vq.books.1": b}), _silo(), SiloPlan(0, book_idx=1),
                   CFG, 1, n_classes=3)[0].metrics
        for b in (book, book.tolist())
    ]  # fmt: skip
    assert runs[0] == runs[1] and np.isfinite(list(runs[0].values())).all()
