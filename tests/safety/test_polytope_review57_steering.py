"""Review 57: Safe Flow's corrected states are inside the polytope as the model gets them (in
its dtype), not only in the float64 the projection computed them in."""

import numpy as np
import pytest

from trustlab.safety import SafetyPolytope, safe_flow

torch = pytest.importorskip("torch")

from hooked_models import HookedModel as _HookedModel  # noqa: E402


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_corrected_states_are_inside_in_the_models_dtype(dtype):
    rng = np.random.default_rng(5)
    d = 64
    mean = rng.normal(size=d) * rng.choice([1.0, 30.0], size=d)  # large offsets, as residuals
    scale = rng.uniform(0.3, 3.0, size=d)
    polytope = SafetyPolytope.from_parameters(
        rng.normal(size=(4, d)), np.ones(4), mean=mean, scale=scale, layer=1
    )
    h = torch.tensor(mean + rng.normal(size=(200, 1, d)) * scale * 2, dtype=getattr(torch, dtype))
    h = h[torch.from_numpy(polytope.is_unsafe(h[:, 0, :].double().numpy()))]
    model = _HookedModel(d)
    with safe_flow(polytope, model) as stats:
        out = model.hook(h)
    written = out[:, 0, :].double().numpy()
    assert stats.n_flagged == len(h) > 50
    # old: 99 of 183 (float32) and 120 of 182 (bfloat16) written states were still flagged
    # while Safe Flow reported no infeasible step
    assert not polytope.is_unsafe(written).any()
    assert stats.n_infeasible == 0
