"""A refused resume names what differs in words a user knows, not the checkpoint's keys."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import SmoothedClassifier, certify_dataset

X = np.array([[1.0], [-0.3], [0.2]])
Y = [1, 0, 1]


def halfspace(batch):
    return (batch[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    ("change", "named"),
    [({"random_state": 3}, "the seed"), ({"X": X[:2], "y": Y[:2]}, "the data")],
)
def test_a_refused_resume_names_the_seed_or_the_data(tmp_path, change, named):
    path = tmp_path / "run.jsonl"
    smooth = SmoothedClassifier(halfspace, 0.5, 2)
    settings = {"X": X, "y": Y, "n": 200, "random_state": 0}
    certify_dataset(smooth, **settings, checkpoint=path, model_id="halfspace")
    with pytest.raises(InputError, match=rf"other settings \({named}\)") as caught:
        certify_dataset(smooth, **{**settings, **change}, checkpoint=path, model_id="halfspace")
    assert "entropy" not in str(caught.value) and "sha256" not in str(caught.value)


def test_another_alpha_resumes_and_equals_a_fresh_run(tmp_path):
    """alpha acts after sampling: a rerun at another alpha reuses the counts, mixes nothing."""
    path = tmp_path / "run.jsonl"
    smooth = SmoothedClassifier(halfspace, 0.5, 2)
    settings = {"n": 300, "random_state": 0, "model_id": "halfspace"}
    certify_dataset(smooth, X, Y, alpha=0.001, checkpoint=path, **settings)
    resumed = certify_dataset(smooth, X, Y, alpha=0.2, checkpoint=path, **settings)
    fresh = certify_dataset(smooth, X, Y, alpha=0.2, n=300, random_state=0)
    assert resumed.alpha == 0.2
    assert resumed.to_dict() == fresh.to_dict()
