"""``explain regions predict/evaluate --model`` with a model fitted in the library on label indices.

Found in review 66: a RegionSparseClassifier fitted on ``bam_lite(...).labels`` (the indices
0..9 of bam-lite-digits, whose class names are '0'..'9') and saved with ``save()`` passed the CLI's
vocabulary check (its classes read as text are the data's names) but its predictions (int64) were
then compared with the generated labels (text): ``predict --model DIR --data bam-lite-digits --n 12``
reported accuracy 0.0 where the model was right on 1 of 12 images (0.083), and ``evaluate`` stopped
with "labels: expected labels among the classes of model 'm' (0, 1, ..., 9), got 12 of 12 outside
them ('1', '7', '2', ...)", an option the command does not have. Now the CLI reads a loaded model's
classes as their names: the accuracy is the library's, and evaluate runs.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import run_quiet as _cli

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.explain.regions import RegionSparseClassifier, bam_lite  # noqa: E402

DIGITS = dict(size=24, object_source="digits")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ds = bam_lite(20, random_state=0, **DIGITS)
        model = RegionSparseClassifier(
            tau=0.5, n_segments=8, pretrain_epochs=1, max_epochs=1,
            selector_widths=(4, 4), classifier_widths=(4, 4, 4), random_state=0,
        ).fit(ds.images, ds.labels)  # fmt: skip
        folder = tmp_path_factory.mktemp("int_labels") / "m"
        model.save(folder)
        yield folder, model
    finally:
        torch.set_num_threads(old)


def test_predict_reports_the_accuracy_of_a_model_fitted_on_label_indices(saved):
    folder, model = saved
    code, stdout, err = _cli(
        "explain", "regions", "predict", "--model", folder, "--data", "bam-lite-digits",
        "--n", "12", "--json",
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(stdout)
    test = bam_lite(12, random_state=3, **DIGITS)  # the command's default --seed
    expected = float(np.mean(model.predict(test.images) == test.labels))
    assert expected > 0  # the old code said 0.0 for any model
    assert payload["accuracy"] == pytest.approx(expected)


def test_evaluate_runs_on_a_model_fitted_on_label_indices(saved):
    folder, model = saved
    code, stdout, err = _cli(
        "explain", "regions", "evaluate", "--model", folder, "--data", "bam-lite-digits",
        "--n", "12", "--deltas", "none", "--json",
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(stdout)["accuracy"]
    test = bam_lite(12, random_state=3, **DIGITS)
    assert rows[0]["accuracy"] == pytest.approx(np.mean(model.predict(test.images) == test.labels))
