"""Review 65: safe_flow(correct_first=0) was taken and corrected nothing, silently: measured 42
of 50 unsafe states of a hooked layer went through unchanged with stats of 0 checked, while
steered_generate and the CLI refuse 0 for that reason. Now safe_flow refuses it alike, naming
correct_first; 1 and None still correct every flagged state."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope, safe_flow

torch = pytest.importorskip("torch")

from hooked_models import HookedModel as _HookedModel  # noqa: E402


def _polytope_and_states():
    rng = np.random.default_rng(0)
    d = 8
    polytope = SafetyPolytope.from_parameters(
        rng.normal(size=(3, d)), np.ones(3), mean=np.zeros(d), scale=np.ones(d), layer=1
    )
    return polytope, torch.tensor(rng.normal(size=(50, 1, d)) * 5, dtype=torch.float32)


@pytest.mark.parametrize("zero", [0, np.int64(0)])
def test_correct_first_zero_is_refused(zero):
    polytope, _ = _polytope_and_states()
    with pytest.raises(InputError, match="0 checks no state") as info:
        with safe_flow(polytope, _HookedModel(8), correct_first=zero):
            pass
    assert info.value.argument == "correct_first"


@pytest.mark.parametrize("k", [1, None])
def test_one_and_none_still_correct(k):
    polytope, h = _polytope_and_states()
    model = _HookedModel(8)
    with safe_flow(polytope, model, correct_first=k) as stats:
        out = model.hook(h)
    assert stats.n_checked == 50 and stats.n_flagged > 30
    assert not polytope.is_unsafe(out[:, 0, :].double().numpy()).any()
