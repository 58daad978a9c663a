"""Review 4: a Flower node that holds no codebooks after the first training round (its
SuperNode restarted mid-run, so context.state is gone) is refused naming its partition-id; it
trained on from the common initial book 0, or refitted its extension book by k-means, without a
word."""

import numpy as np
import pytest

from trustlab.errors import BackendError

pytest.importorskip("flwr")

from flwr.app import Context, RecordDict  # noqa: E402

from trustlab.federated.flower import _silo_state, _store_state  # noqa: E402
from trustlab.federated.uefl import SiloState  # noqa: E402


def _context():
    return Context(run_id=1, node_id=7, node_config={"partition-id": 2}, state=RecordDict(),
                   run_config={"num-silos": 3})  # fmt: skip


def test_the_first_training_round_starts_without_codebooks():
    assert _silo_state(_context(), 2, 1, True) == SiloState()


@pytest.mark.parametrize(("round_no", "training"), [(2, True), (5, True), (1, False), (3, False)])
def test_a_node_without_its_codebooks_later_is_refused(round_no, training):
    with pytest.raises(BackendError, match=rf"^partition-id 2: .*no codebooks .* round {round_no}"):
        _silo_state(_context(), 2, round_no, training)


def test_a_node_keeps_its_codebooks_between_rounds():
    context = _context()
    books = {"vq.books.0": np.ones((4, 2), np.float32), "vq.books.1": np.zeros((4, 2), np.float32)}
    _store_state(context, SiloState(books, 1))
    state = _silo_state(context, 2, 4, True)
    assert state.book_idx == 1 and set(state.codebooks) == set(books)
    assert np.array_equal(state.codebooks["vq.books.0"], books["vq.books.0"])
