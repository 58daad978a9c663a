"""evaluate_regions on a user's own labels and images (review 53): labels outside a model's classes
(0..5 for a model of shape names) gave accuracy 0.0 without a word, and images of another size
than a model's were refused as 'X: ...' (the argument is images); both are refused naming the
argument. ``evaluate --model`` of a model that lacks some of the generated classes is refused
naming --data (the library's 'labels' is no option of the command)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_main

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    RegionSparseClassifier,
    bam_lite,
    checkpoint_data,
    evaluate_regions,
    load_checkpoint,
)


@pytest.fixture(scope="module")
def shipped():
    data = checkpoint_data("test", random_state=3).subset(range(4))
    return load_checkpoint("p2p_fixed"), data, np.asarray(data.class_names)[data.labels]


def test_labels_outside_the_models_classes_are_refused(shipped):
    model, data, y = shipped
    for labels, got in ((np.arange(4), "4 of 4 outside them (0, 1, 2, ...)"),
                        (np.array([*y[:3], "cat"]), "1 of 4 outside them ('cat')")):  # fmt: skip
        with pytest.raises(InputError) as info:
            evaluate_regions({"f": model}, data.images, labels, data.masks, deltas=())
        assert str(info.value) == (
            "labels: expected labels among the classes of model 'f' (circle, ellipse, "
            f"rectangle, triangle), got {got}"
        )
        assert info.value.argument == "labels"
    ev = evaluate_regions({"f": model}, data.images, y, data.masks, deltas=(), deletion=(),
                          insertion=())  # fmt: skip
    assert ev.accuracy[0]["accuracy"] == float(np.mean(model.predict(data.images) == y))


def test_images_of_another_size_name_images(shipped):
    model, data, y = shipped
    small = data.images[:, :, :32, :32]
    with pytest.raises(InputError) as info:
        evaluate_regions({"f": model}, small, y, data.masks[:, :32, :32], deltas=())
    assert str(info.value) == (
        "images: expected images of 64x64 pixels (the size of model 'f'), got an array of "
        "shape (4, 3, 32, 32)"
    )


@pytest.fixture(scope="module")
def two_classes(tmp_path_factory):
    """A model saved by the library, trained on circles and rectangles only."""
    ds = bam_lite(12, size=32, object_source="shapes", random_state=1)
    names = np.asarray(ds.class_names)[ds.labels]
    two = np.isin(names, ["circle", "rectangle"])
    model = RegionSparseClassifier(max_epochs=1, pretrain_epochs=0, n_segments=8, random_state=0)
    folder = tmp_path_factory.mktemp("regions53") / "two"
    model.fit(ds.images[two], names[two]).save(folder)
    return folder


def test_cli_evaluate_of_a_model_lacking_generated_classes_names_data(two_classes, capsys):
    args = ["explain", "regions", "evaluate", "--model", two_classes, "--n", "8"]
    code, _, err = run_main([*args, "--deltas", "none"], capsys)
    assert code == 2
    assert one_line(err).startswith(
        "trustlab: error: --data: expected images labelled like model two (circle, rectangle)"
    )


def test_cli_predict_reports_no_accuracy_on_classes_the_model_lacks(two_classes, capsys):
    """predict --data: triangles and ellipses counted as wrong for a model that cannot name them."""
    args = ["explain", "regions", "predict", "--model", two_classes, "--data", "bam-lite-shapes"]
    code, stdout, err = run_main([*args, "--n", "8", "--json"], capsys)
    assert code == 0, err
    assert "accuracy" not in json.loads(stdout)
    assert one_line(err) == (
        "no accuracy: 4 of 8 images are labelled ellipse, triangle, not among the model's "
        "classes (circle, rectangle)"
    )
    ds = bam_lite(8, size=32, object_source="shapes", random_state=3)
    assert np.isin(np.asarray(ds.class_names)[ds.labels], ["ellipse", "triangle"]).sum() == 4


def test_summary_says_how_many_images_kept_nothing(shipped):
    """An image whose selection is empty is classified from a blank image; the mean kept area hid
    it (p2p_dynamic on a black, a white and a grey image: 'mean kept area 0.005', 2 of 3 empty)."""
    import dataclasses

    model, data, _ = shipped
    ex = model.explain(data.images)
    assert (ex.kept_fraction > 0).all() and "nothing kept" not in ex.summary()
    two_empty = dataclasses.replace(ex, kept_fraction=np.array([0.0, 0.1, 0.0, 0.2]))
    assert two_empty.summary().endswith("; nothing kept on 2 of 4 (predicted from a blank image)")
