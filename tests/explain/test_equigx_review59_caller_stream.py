"""train_tfn leaves the caller's torch random stream as it was (review 59).

It called ``torch.manual_seed`` openly, so a caller's draws after training came from the
training's seed. The fitted weights stay those of a run seeded the same way (pinned against a
hand-seeded run).
"""

import pytest

torch = pytest.importorskip("torch")

from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise, train_tfn  # noqa: E402


def _draws_after(fn):
    torch.manual_seed(123)
    fn()
    return torch.rand(5)


def _draws_without():
    torch.manual_seed(123)
    return torch.rand(5)


@pytest.mark.parametrize("seed", [0, 2**64 + 5])
def test_train_tfn_leaves_the_callers_torch_stream(seed):
    data = shapes_in_noise(12, variant="same_count", n_nodes=8, random_state=0)
    torch.manual_seed(5)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    after = _draws_after(
        lambda: train_tfn(net, data, max_epochs=1, batch_size=6, random_state=seed)
    )
    assert torch.equal(after, _draws_without())
