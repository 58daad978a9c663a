"""Images read one by one from files of several sizes and given as a list (review 53): the error
showed the first array's values ('got list [array([[[0.905...') without saying the sizes differ;
it now names the shapes and says to resize them to one size. Labels read with pandas' 'string'
dtype hold NA for a missing label, which is now refused as missing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import RegionSparseClassifier  # noqa: E402
from trustlab.explain.regions.inputs import check_images  # noqa: E402


def test_a_list_of_images_of_several_sizes_names_the_shapes():
    rng = np.random.default_rng(0)
    images = [rng.random((3, 64, 64)), rng.random((3, 32, 40)), rng.random((3, 64, 64))]
    with pytest.raises(InputError) as info:
        RegionSparseClassifier(max_epochs=1).fit(images, ["a", "b", "a"])
    assert str(info.value) == (
        "X: expected images of one size (n, 3, H, W), got 3 images of shapes (3, 64, 64), "
        "(3, 32, 40); resize them to one size first"
    )
    five = [rng.random((3, 8 * k, 8)) for k in range(1, 6)]
    with pytest.raises(
        InputError, match=r"of shapes \(3, 8, 8\), \(3, 16, 8\), \(3, 24, 8\), \.\.\.;"
    ):
        check_images(five)


def test_a_list_that_is_not_of_images_keeps_the_general_message():
    with pytest.raises(InputError) as info:
        check_images([np.zeros((3, 8, 8)), "a"])
    assert str(info.value).startswith("images: expected an array of shape (n, 3, H, W), got list")
    assert np.array_equal(check_images([np.zeros((3, 8, 8))] * 2).numpy(), np.zeros((2, 3, 8, 8)))


def test_a_pandas_string_label_column_with_a_missing_label_says_missing():
    """A labels.csv read with dtype='string' holds pandas' NA for an empty cell: it was refused as
    'labels of one type (all numbers or all strings)'."""
    pd = pytest.importorskip("pandas")
    from trustlab.explain.regions.inputs import check_training_data

    images = np.zeros((4, 3, 8, 8), dtype=np.float32)
    for labels in (pd.Series(["a", None, "b", "a"], dtype="string"), pd.array(["a", "b", pd.NA])):
        with pytest.raises(InputError, match=r"^y: expected a label for every image \(no None"):
            check_training_data(images[: len(labels)], labels)
