"""The polytope's training loop updates its parameters with ``trustlab._adam.Adam``, torch.optim.Adam's
update written out (speed, stop 62): it must give torch's parameters to the bit."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab._adam import Adam  # noqa: E402
from trustlab.safety.polytope import _train  # noqa: E402
from trustlab.safety.polytope.estimator import SafetyPolytope  # noqa: E402


def _torch_adam(params, learning_rate):
    """The optimiser as it was before: torch.optim.Adam."""
    return torch.optim.Adam(params, lr=learning_rate)


def test_adam_written_out_equals_torch_adam_to_the_bit():
    rng = np.random.default_rng(0)
    start = [rng.normal(size=(3, 5)), rng.normal(size=3)]
    x = torch.tensor(rng.normal(size=(7, 5)), dtype=torch.float32)
    fitted = []
    for kind in (Adam, _torch_adam):
        params = [torch.tensor(v, dtype=torch.float32, requires_grad=True) for v in start]
        optimiser = kind(params, learning_rate=1e-2)
        for _ in range(25):  # the bias corrections change with every step
            loss = torch.relu(x @ params[0].T - params[1]).sum() + params[0].abs().sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        fitted.append([p.detach().numpy().copy() for p in params])
    assert all(np.array_equal(a, b) for a, b in zip(*fitted, strict=True))


@pytest.mark.parametrize("encoder", ["linear", "concept"])
def test_training_gives_the_parameters_torch_adam_gives(monkeypatch, encoder):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6))
    y = np.r_[np.zeros(20), np.ones(20)].astype(bool)
    X[y] += 1.5
    settings = {"n_facets": 3, "encoder": encoder, "n_concepts": 8, "max_epochs": 4}
    settings["batch_size"] = 16  # several batches per epoch, a short last one
    ours = SafetyPolytope(**settings, random_state=0).fit(X, y)
    monkeypatch.setattr(_train, "Adam", _torch_adam)
    theirs = SafetyPolytope(**settings, random_state=0).fit(X, y)
    assert ours.loss_history_ == theirs.loss_history_
    for name in ("normals_", "offsets_", "encoder_weight_", "encoder_bias_"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a is None and b is None) or np.array_equal(a, b), name
