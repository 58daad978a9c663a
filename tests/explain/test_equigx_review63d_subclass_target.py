"""Diff review 63 D of edd57c78: a given target is checked without a forward pass only for a
plain TensorFieldNetwork. A subclass whose forward returns another number of classes (another
head) is checked against what its forward returns, as before edd57c78 (which read its config and
let target=2 through for a 2-class head: 'random' returned scores, 'gradient' an IndexError)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx import (  # noqa: E402
    TensorFieldNetwork,
    baseline_scores,
    shapes_in_noise,
)


class _TwoClassHead(TensorFieldNetwork):
    def forward(self, graph, **kwargs):  # a 3-class config, the first 2 logits returned
        out = super().forward(graph, **kwargs)
        return out[:, :2]


@pytest.mark.parametrize("method", ["random", "gradient"])
def test_subclass_target_is_checked_against_its_forward(method):
    torch.manual_seed(0)
    graph = shapes_in_noise(1, variant="same_count", n_nodes=8, random_state=0)[0]
    net = _TwoClassHead(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    with pytest.raises(InputError, match=r"target.*0\.\.1"):
        baseline_scores(net, graph, method, target=2, random_state=0)
    assert baseline_scores(net, graph, method, target=1, random_state=0).shape == (8,)
