"""The random method's deletion is the random-deletion control: its fidelity gap is not a measured 0."""

from __future__ import annotations

import json

import torch

from trustlab.explain.equigx import TensorFieldNetwork, evaluate_explanations, shapes_in_noise


def test_random_method_gap_is_the_control_not_a_measured_zero():
    torch.manual_seed(0)
    data = shapes_in_noise(6, variant="same_count", n_nodes=10, random_state=0)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    ev = evaluate_explanations(net, data, methods=["equigx", "random"], n_random=1)
    assert ev.fidelity_gap["random"] is None
    assert (
        ev.fidelity_gap["equigx"]
        == ev.accuracy_after_deletion["random"] - ev.accuracy_after_deletion["equigx"]
    )
    row = next(line for line in ev.summary().splitlines() if line.split()[0] == "random")
    assert row.split()[-1] == "control"
    assert json.loads(json.dumps(ev.to_dict()))["fidelity_gap"]["random"] is None
