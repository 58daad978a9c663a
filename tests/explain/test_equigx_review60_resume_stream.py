"""train_tfn resumed without an int seed leaves the caller's torch stream as it was (review 60).

A resumed run set torch's global stream to the state saved in the checkpoint also for
``random_state=None`` or a numpy Generator, so the caller's later draws came from the
interrupted run's stream, though the docstring says the caller's stream is left as it was.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise, train_tfn  # noqa: E402


class Stop(Exception):
    pass


def _stop(*args):
    raise Stop


@pytest.mark.parametrize("seed", [None, "generator"])
def test_a_resumed_unseeded_run_leaves_the_callers_torch_stream(tmp_path, seed):
    data = shapes_in_noise(12, variant="same_count", n_nodes=8, random_state=0)
    torch.manual_seed(5)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)

    def run(progress=None):
        state = np.random.default_rng(1) if seed == "generator" else None
        return train_tfn(net, data, max_epochs=2, batch_size=6, random_state=state,
                         checkpoint_dir=tmp_path, progress=progress)  # fmt: skip

    torch.manual_seed(77)  # the interrupted run's stream, saved in its checkpoint
    with pytest.raises(Stop):
        run(_stop)
    torch.manual_seed(123)
    history = run()
    assert history.epochs == (1, 2)  # resumed from epoch 1
    after = torch.rand(5)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(5))
