"""apply_mask keeps tensor fills as they were and refuses text (diff review 60 E of a167f580).

The finite-fill check converted a tensor fill through numpy: a bfloat16 fill (a bfloat16 model's
normalised black) raised numpy's raw TypeError and a fill tensor's gradient was cut; and the
float64 conversion read the text '0.5' as the number 0.5.
"""

import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import apply_mask  # noqa: E402

X, M = torch.ones(1, 2, 1, 2), torch.tensor([[[[1.0, 0.0]]]])


def test_a_bfloat16_fill_is_taken():
    xb = X.to(torch.bfloat16)
    out = apply_mask(xb, M, fill=torch.tensor([0.5, -1.0], dtype=torch.bfloat16))
    assert out.dtype == torch.bfloat16
    assert out[0, :, 0].tolist() == [[1.0, 0.5], [1.0, -1.0]]  # exact in bfloat16


def test_the_gradient_flows_through_a_fill_tensor():
    fill = torch.tensor([0.5, 0.25], requires_grad=True)
    apply_mask(X, M, fill=fill).sum().backward()
    assert fill.grad.tolist() == [1.0, 1.0]  # one masked pixel per channel


@pytest.mark.parametrize("fill", ["0.5", b"0.5", 1 + 2j, [None, 1.0]])
def test_text_and_complex_fills_are_refused(fill):
    with pytest.raises(InputError, match="fill: expected a number or 2 per-channel values"):
        apply_mask(X, M, fill=fill)
