"""The encoder's 2 x 2 max pooling (review 67: channels-last forward, torch's own backward on
the same indices) against ``max_pool2d``, bit for bit. Ties are forced (windows of equal values,
windows of zeros after ReLU), since they are where another kernel could route the gradient to
another element."""

import pytest

from trustlab.federated.model import _modules, build_model
from trustlab.federated.uefl import UEFLConfig

torch = pytest.importorskip("torch")
F = torch.nn.functional


@pytest.mark.parametrize("kind", ["zeros", "ties", "normal"])
def test_halving_max_pool_is_max_pool2d_bit_for_bit(kind):
    gen = torch.Generator().manual_seed(7)
    shape = (32, 16, 14, 14)
    if kind == "zeros":  # after ReLU: windows of zeros only, or one positive value
        base = torch.relu(torch.randn(shape, generator=gen) - 1.0)
    elif kind == "ties":
        base = torch.randint(0, 3, shape, generator=gen).float()
    else:
        base = torch.randn(shape, generator=gen)
    pool = _modules()["MaxPool2"]()
    x_new, x_old = base.clone().requires_grad_(True), base.clone().requires_grad_(True)
    y_new, y_old = pool(x_new), F.max_pool2d(x_old, 2)
    assert y_new.is_contiguous() and torch.equal(y_new, y_old)
    g = torch.randn(y_old.shape, generator=gen)
    y_new.backward(g)
    y_old.backward(g)
    assert x_new.grad.is_contiguous() and torch.equal(x_new.grad, x_old.grad)
    with torch.no_grad():
        assert torch.equal(pool(base), F.max_pool2d(base, 2))


def test_the_cnn_encoder_keeps_its_array_names_and_pools_as_before():
    model = build_model(UEFLConfig().model_spec(64, 10), random_state=0)
    assert list(model.state_dict()) == [
        "encoder.net.0.weight", "encoder.net.0.bias", "encoder.net.3.weight",
        "encoder.net.3.bias", "vq.books.0", "head.1.weight", "head.1.bias", "head.4.weight",
        "head.4.bias",
    ]  # fmt: skip
    x = torch.randn(5, 64, generator=torch.Generator().manual_seed(0))
    net = model.encoder.net
    with torch.no_grad():
        h = net[1](net[0](x.view(-1, 1, 8, 8)))
        assert torch.equal(net[2](h), F.max_pool2d(h, 2))
