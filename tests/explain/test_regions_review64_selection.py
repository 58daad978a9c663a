"""Bad input to the public selection math (review 64): kl_sparsity / l1_sparsity with tau "0.5"
or None raised a raw TypeError, with tau of another shape than p_bar a raw RuntimeError (or,
with (2, 1) against (2,), a (2, 2) loss), and tau=True was read as 1.0;
expected_kept_fraction with a negative size returned 0.5; relaxed_bernoulli with probs 1.5
clamped it to 1 - eps and sampled. Each is now an InputError naming the argument."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    expected_kept_fraction,
    kl_sparsity,
    l1_sparsity,
    relaxed_bernoulli,
)

P = torch.tensor([0.1, 0.6])


@pytest.mark.parametrize("fn", [kl_sparsity, l1_sparsity])
@pytest.mark.parametrize("tau", ["0.5", None, True, torch.tensor([0.2, 0.3, 0.4]), [[0.2], [0.3]]])
def test_bad_tau_is_refused(fn, tau):
    with pytest.raises(InputError) as info:
        fn(P, tau)
    assert info.value.argument == "tau"


def test_good_tau_shapes_still_work():
    assert l1_sparsity(P, 0.25).tolist() == pytest.approx([0.0, 0.35])
    assert l1_sparsity(P, [0.2, 0.5]).tolist() == pytest.approx([0.0, 0.1])
    assert kl_sparsity(P, torch.tensor(0.6)).tolist() == [0.0, 0.0]


def test_negative_size_and_probability_outside_0_1_are_refused():
    with pytest.raises(InputError) as info:
        expected_kept_fraction(torch.zeros(1, 2), torch.tensor([[3, -1]]))
    assert info.value.argument == "sizes"
    for probs in (torch.tensor([1.5]), torch.tensor([-0.1]), torch.tensor([float("nan")])):
        with pytest.raises(InputError) as info:
            relaxed_bernoulli(probs, 0.5, generator=0)
        assert info.value.argument == "probs"
