"""The checks at the boundary of one silo's round (:func:`~trustlab.federated.uefl.train_silo`,
:func:`~trustlab.federated.uefl.evaluate_silo`), kept out of ``uefl`` (at its size cap)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_positive_int
from trustlab.errors import InputError
from trustlab.federated.model import CODEBOOK_PREFIX, codebook_key, is_codebook_key
from trustlab.federated.silos import Silo, check_silo


def check_silo_round(
    shared: Any, state: Any, silo: Any, plan: Any, config: Any, round_no: Any, n_classes: Any,
    kinds: tuple[type, type, type], stage: str,
) -> Silo:  # fmt: skip
    """The silo as the model reads it (float32 features, int64 labels) once every argument of a
    silo's round (``stage`` "train" or "evaluate") is what the round needs; an InputError naming
    the first that is not. ``kinds``: the classes of the plan, the state and the config
    (SiloPlan, SiloState, UEFLConfig, defined in ``uefl``, which imports this module).

    A silo of float64 features (numpy's default) failed in training with torch's 'mat1 and mat2
    must have the same dtype', a negative round or silo index with numpy's 'expected
    non-negative integer', and a book the silo does not hold, in evaluation, with
    "'ParameterDict' object has no attribute '2'"."""
    plan_kind, state_kind, config_kind = kinds
    pairs = {"shared": (shared, Mapping), "state": (state, state_kind), "plan": (plan, plan_kind),
             "config": (config, config_kind)}  # fmt: skip
    for name, (value, kind) in pairs.items():
        if not isinstance(value, kind):
            what = "a mapping name -> array" if kind is Mapping else f"a {kind.__name__}"
            raise InputError.bad(name, what, value)
    if not isinstance(state.codebooks, Mapping):  # SiloState(None) was a raw TypeError
        raise InputError.bad(
            "state.codebooks", "a mapping name -> array (SiloState() holds {})", state.codebooks
        )
    check_positive_int(round_no, "round_no", minimum=0)  # it seeds the round with the silo index
    check_positive_int(plan.silo, "plan.silo", minimum=0)
    check_positive_int(plan.book_idx, "plan.book_idx", minimum=0)
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    silo = check_silo(silo, "silo")
    top = int(max(np.max(silo.y_train), np.max(silo.y_test)))
    if top >= n_classes:
        raise InputError.bad("n_classes", f"more than the silo's largest label {top}", n_classes)
    books = {**state.codebooks, **shared}
    if (
        stage == "evaluate"
        and plan.use_vq
        and plan.book_idx
        and codebook_key(plan.book_idx) not in books
    ):
        held = sorted({"0", *(k[len(CODEBOOK_PREFIX) :] for k in books if is_codebook_key(k))})
        raise InputError.bad(
            "plan.book_idx",
            f"a codebook the silo holds ({', '.join(held)}; train_silo creates a new one)",
            plan.book_idx,
        )
    return silo


def float32_range_rows(value: Any, name: str) -> np.ndarray:
    """``value`` as finite float64 rows (n, d) whose magnitudes fit float32: a float32 array
    made from them (a codebook) holds no inf (it held inf with only numpy's overflow warning)."""
    X = as_float_array(value, name, ndim=2)
    top = float(np.abs(X).max()) if X.size else 0.0
    if top > float(np.finfo(np.float32).max):
        raise InputError.bad(
            name, "values within float32's range (|x| <= 3.4e38), the codebook's type",
            f"a value of magnitude {top:.3g}",
        )  # fmt: skip
    return X


def _round_seed(random_state: int, round_no: int, silo: int, purpose: int = 0) -> int:
    """A seed for one silo in one round, equal on every engine (here beside the check of
    ``round_no`` and the silo index that it needs: numpy's SeedSequence takes no negative
    entry)."""
    return int(np.random.SeedSequence([random_state, round_no, silo, purpose]).generate_state(1)[0])
