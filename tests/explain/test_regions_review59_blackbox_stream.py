"""BlackBoxClassifier.fit leaves the caller's torch random stream as it was (review 59).

fit seeded its network with an open ``torch.manual_seed``, so a caller's draws after fit came
from the estimator's seed. Two fits of one seed still give the same weights.
"""

import pytest

torch = pytest.importorskip("torch")

from trustlab.explain.regions import bam_lite  # noqa: E402
from trustlab.explain.regions.baselines import BlackBoxClassifier  # noqa: E402


@pytest.mark.parametrize("seed", [0, None])
def test_fit_leaves_the_callers_torch_stream(seed):
    data = bam_lite(16, size=32, random_state=0)
    torch.manual_seed(123)
    first = BlackBoxClassifier(max_epochs=1, random_state=seed).fit(data.images, data.labels)
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))
    if seed is not None:
        again = BlackBoxClassifier(max_epochs=1, random_state=seed).fit(data.images, data.labels)
        for key, value in first.classifier_.state_dict().items():
            assert torch.equal(value, again.classifier_.state_dict()[key]), key
