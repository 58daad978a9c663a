"""train_silo and evaluate_silo (public, exported by trustlab.federated) check their arguments
at the boundary (review 66).

Measured on the old uefl.py with a 12-row silo of 8 features (encoder="mlp"): a Silo of float64
features, numpy's default, failed in train_silo with torch's raw "RuntimeError: mat1 and mat2
must have the same dtype, but got Double and Float" (evaluate_silo accepted the same silo);
round_no=-1 and SiloPlan(-1) were numpy's raw "ValueError: expected non-negative integer",
round_no=1.5 a raw "TypeError: seed must be integer"; SiloPlan(0, book_idx=-1) trained a book
named 'vq.books.-1' without a word; shared=None, state=None and config={} were raw
AttributeErrors; evaluate_silo on a book the silo does not hold was "AttributeError:
'ParameterDict' object has no attribute '2'". Now each is an InputError naming the argument,
and a float64 silo trains exactly as its float32 copy does.
"""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import Silo, UEFLConfig, initial_weights
from trustlab.federated.uefl import SiloPlan, SiloState, evaluate_silo, train_silo

torch = pytest.importorskip("torch")

CFG = UEFLConfig(encoder="mlp", local_epochs=1, mc_passes=2, n_codes=4, dim=8, seg=2)


def _silo(dtype=np.float32):
    rng = np.random.default_rng(0)
    y = np.arange(12) % 3
    return Silo(rng.random((12, 8)).astype(dtype), y, rng.random((12, 8)).astype(dtype), y)


def _shared():
    return {k: v for k, v in initial_weights(CFG, 8, 3).items() if not k.startswith("vq.books")}


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_a_float64_silo_trains_as_its_float32_copy():
    plan = SiloPlan(0, init_ext=True)
    ours, _ = train_silo(_shared(), SiloState(), _silo(np.float64), plan, CFG, 1, n_classes=3)
    ref, _ = train_silo(_shared(), SiloState(), _silo(np.float32), plan, CFG, 1, n_classes=3)
    assert ours.metrics == ref.metrics
    for key, value in ref.arrays.items():
        assert np.array_equal(ours.arrays[key], value), key


@pytest.mark.parametrize(
    ("change", "argument"),
    [
        ({"round_no": -1}, "round_no"),
        ({"round_no": 1.5}, "round_no"),
        ({"plan": SiloPlan(-1, init_ext=True)}, "plan.silo"),
        ({"plan": SiloPlan(0, book_idx=-1, init_ext=True)}, "plan.book_idx"),
        ({"shared": None}, "shared"),
        ({"state": None}, "state"),
        ({"config": {}}, "config"),
        ({"silo": "silo.npz"}, "silo"),
    ],
)
def test_a_bad_argument_of_a_silo_round_is_an_input_error_naming_it(change, argument):
    args = {"shared": _shared(), "state": SiloState(), "silo": _silo(),
            "plan": SiloPlan(0, init_ext=True), "config": CFG, "round_no": 1}  # fmt: skip
    args.update(change)
    for run in (train_silo, evaluate_silo):
        with pytest.raises(InputError) as info:
            run(args["shared"], args["state"], args["silo"], args["plan"], args["config"],
                args["round_no"], n_classes=3)  # fmt: skip
        assert info.value.argument == argument


def test_evaluating_a_book_the_silo_does_not_hold_names_plan_book_idx():
    silo = _silo()
    _, state = train_silo(_shared(), SiloState(), silo, SiloPlan(0, init_ext=True), CFG, 1,
                          n_classes=3)  # fmt: skip
    with pytest.raises(InputError, match=r"plan.book_idx: expected a codebook the silo holds \(0;"):
        evaluate_silo(_shared(), state, silo, SiloPlan(0, book_idx=2), CFG, 1, n_classes=3)
    # the book it holds is evaluated as before
    result = evaluate_silo(_shared(), state, silo, SiloPlan(0), CFG, 1, n_classes=3)
    assert 0.0 <= result.accuracy <= 1.0 and np.isfinite(result.entropy)
