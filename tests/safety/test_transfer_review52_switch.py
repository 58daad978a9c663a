"""SafetySwitch refuses a map fitted from another model's activations (review 52), on stand-ins
with a LocalModel's attributes (no forward pass is needed to refuse)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.safety.transfer import ActivationMap, SafetySwitch  # noqa: E402


def _model(name):
    return SimpleNamespace(name=name, n_layers=2, hidden_size=8, tokenizer=None,
                           activations=None, intervene=None)  # fmt: skip


def test_a_map_from_another_model_is_refused():
    """A map from 'base' to 'tuned' switched into 'tuned' (its target, same width) was accepted:
    the map read activations of a model it was not fitted on, and generation changed silently."""
    rng = np.random.default_rng(52)
    X = rng.normal(size=(60, 8))
    m = ActivationMap(kind="affine").fit(
        X, X @ rng.normal(size=(8, 8)), source_model="base", target_model="tuned",
        source_layer=1, target_layer=1,
    )  # fmt: skip
    with pytest.raises(
        InputError, match=r"^model: expected the model the map was fitted from, 'base'"
    ):
        SafetySwitch(m, _model("tuned"), 1)
    assert SafetySwitch(m, _model("base"), 1).layer == 1
    unnamed = ActivationMap(kind="affine").fit(X, X, source_layer=1, target_layer=1)
    assert SafetySwitch(unnamed, _model("tuned"), 1).layer == 1  # no name recorded: not checked
