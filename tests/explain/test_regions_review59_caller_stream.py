"""RegionSparseClassifier.fit leaves the caller's torch random stream as it was (review 59).

fit seeded its networks with an open ``torch.manual_seed``, so a caller's draws after fit came
from the estimator's seed. An interrupted fit still resumes to the uninterrupted weights (the
training's torch state is saved and restored inside the seeded block).
"""

import pytest

torch = pytest.importorskip("torch")

from trustlab.explain.regions import RegionSparseClassifier, bam_lite  # noqa: E402


class _Stop(Exception):
    pass


def _model(cache, **kw):  # superpixels cached: computed once
    return RegionSparseClassifier(
        tau=0.3, n_segments=16, max_epochs=2, random_state=0, colour_jitter=0.1,
        cache_dir=cache, **kw,
    )  # fmt: skip


def test_fit_leaves_the_callers_torch_stream_and_resumes_to_the_same_weights(tmp_path):
    data = bam_lite(16, size=32, random_state=0)
    torch.manual_seed(123)
    full = _model(tmp_path / "cache").fit(data.images, data.labels)
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))

    def stop(epoch, total, history):
        if epoch == 2:
            raise _Stop

    with pytest.raises(_Stop):
        _model(tmp_path / "cache", checkpoint_dir=tmp_path / "state").fit(
            data.images, data.labels, progress=stop
        )
    torch.manual_seed(123)
    resumed = _model(tmp_path / "cache", checkpoint_dir=tmp_path / "state").fit(
        data.images, data.labels
    )
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))
    for a, b in ((full.selector_, resumed.selector_), (full.classifier_, resumed.classifier_)):
        for key, value in a.state_dict().items():
            assert torch.equal(value, b.state_dict()[key]), key
