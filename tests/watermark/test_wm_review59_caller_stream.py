"""WatermarkPredictor.fit leaves the caller's torch random stream as it was (review 59).

fit seeded the network's initial weights with an open ``torch.manual_seed``, so a caller's
draws after fit came from the predictor's seed. An interrupted fit still resumes to the
uninterrupted weights, and the resumed fit leaves the caller's stream alone too.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.watermark import WatermarkPredictor  # noqa: E402


class _Stop(Exception):
    pass


def test_fit_leaves_the_callers_torch_stream_and_resumes_to_the_same_weights(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(4, 64, 64, 3), dtype=np.uint8)
    masks = np.zeros((4, 64, 64), bool)
    masks[:, 8:24, 8:40] = True
    data = {"scores": [1.0, 2.0, 4.5, 3.0], "masks": masks,
            "content_types": ["logo", "text", "pattern", "logo"]}  # fmt: skip

    def model(**kw):
        return WatermarkPredictor(input_size=64, widths=(4, 8, 8, 8), max_epochs=2,
                                  random_state=0, **kw)  # fmt: skip

    torch.manual_seed(123)
    full = model().fit(images, **data)
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))

    def stop(epoch, total, history):
        if epoch == 1:
            raise _Stop

    with pytest.raises(_Stop):
        model(checkpoint_dir=tmp_path).fit(images, **data, progress=stop)
    torch.manual_seed(123)
    resumed = model(checkpoint_dir=tmp_path).fit(images, **data)
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))
    for key, value in full.net_.state_dict().items():
        assert torch.equal(value, resumed.net_.state_dict()[key]), key
