"""Review 67 (second reader K of 4cce36bf): a silo state's extension codebook, checked.

4cce36bf refused a SiloState whose codebooks are no mapping. The books in the mapping were
checked only when the model has them (book 0: "arrays['vq.books.0']: expected shape (4, 4)"); a
book the model lacks (book 1, 2, ...: a silo's extension, in its state or among the shared
arrays) was added as given. Measured on HEAD 4cce36bf (12-row silo of 8 features, encoder
"mlp", plan.book_idx=1): SiloState({"vq.books.1": None}) or "ab" stopped train_silo and
evaluate_silo on torch's raw "TypeError: can't convert np.ndarray of type numpy.object_"
(numpy.str_), a (3, 5) book on "RuntimeError: Sizes of tensors must match except in dimension
0". Now each is "arrays['vq.books.1']: expected a codebook of shape (4, 4)"; a book of that
shape (a list too) trains and evaluates as before."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import Silo, UEFLConfig, initial_weights
from trustlab.federated.uefl import SiloPlan, SiloState, evaluate_silo, train_silo

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
