"""SafetyPolytope.fit leaves the caller's torch random stream as it was (review 59).

Training seeded torch with an open ``torch.manual_seed``, so a caller's draws after fit came
from the polytope's seed. Two fits of one seed still give the same facets.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.safety.polytope import SafetyPolytope  # noqa: E402


@pytest.mark.parametrize("encoder", ["linear", "concept"])
def test_fit_leaves_the_callers_torch_stream(encoder):
    rng = np.random.default_rng(0)
    acts = rng.normal(size=(60, 5))
    unsafe = acts[:, 0] + 0.3 * rng.normal(size=60) > 0.5

    def fit():
        return SafetyPolytope(n_facets=2, max_epochs=5, encoder=encoder, random_state=0).fit(
            acts, unsafe
        )

    torch.manual_seed(123)
    first = fit()
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))
    again = fit()
    assert np.array_equal(first.normals_, again.normals_)
    assert np.array_equal(first.offsets_, again.offsets_)
