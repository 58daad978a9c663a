"""SafetySwitch refuses a map whose recorded layers are not the layer it replaces (source and
target), on a stand-in with a LocalModel's attributes (no forward pass is needed to refuse)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.safety.transfer import ActivationMap, SafetySwitch  # noqa: E402

WIDTH = 8


def _model():
    return SimpleNamespace(name="tiny", n_layers=4, hidden_size=WIDTH, tokenizer=None,
                           activations=None, intervene=None)  # fmt: skip


def _map(**layers):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, WIDTH))
    return ActivationMap(kind="affine").fit(
        X, X @ rng.normal(size=(WIDTH, WIDTH)), source_model="tiny", target_model="tiny", **layers
    )


def test_a_map_to_another_layer_is_refused():
    """A map fitted from block 0 to block 2 was accepted as a switch at block 0: block 0's output
    became an estimate of block 2's, and generation changed silently."""
    lm = _model()
    with pytest.raises(InputError) as err:
        SafetySwitch(_map(source_layer=0, target_layer=2), lm, 0)
    assert err.value.argument == "activation_map"
    assert "layer 2" in str(err.value) and "layer 0" in str(err.value)
    # only the target recorded: the layer must be that one
    with pytest.raises(InputError, match="layer 2") as err:
        SafetySwitch(_map(target_layer=2), lm, 0)
    assert err.value.argument == "layer"
    # the source layer is still checked first, as before
    with pytest.raises(InputError) as err:
        SafetySwitch(_map(source_layer=1, target_layer=1), lm, 0)
    assert err.value.argument == "layer"


def test_maps_at_the_layer_they_replace_are_accepted():
    lm = _model()
    for layers in ({}, {"source_layer": 2}, {"target_layer": 2},
                   {"source_layer": 2, "target_layer": 2}):  # fmt: skip
        assert SafetySwitch(_map(**layers), lm, 2).layer == 2
