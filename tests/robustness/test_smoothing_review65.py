"""Review 65 of cost-sensitive smoothing: inputs refused with an InputError naming them."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import check_cost_matrix


@pytest.mark.parametrize("n_classes", [2.5, -1, 0, 1, "3", None, True])
def test_check_cost_matrix_refuses_a_bad_class_count(n_classes):
    # check_cost_matrix(None, 2.5) was numpy's TypeError, -1 a ValueError, 0 and 1 an empty
    # or 1 x 1 matrix; a given matrix was compared with '(True, True)'
    with pytest.raises(InputError, match=r"^n_classes: expected an integer >= 2, got"):
        check_cost_matrix(None, n_classes)
    with pytest.raises(InputError, match=r"^n_classes: expected an integer >= 2, got"):
        check_cost_matrix([[0, 1], [1, 0]], n_classes)


def test_check_cost_matrix_takes_numpy_class_counts():
    assert check_cost_matrix(None, np.int64(3)).tolist() == (1 - np.eye(3)).tolist()


def _halfspace(batch):
    return (batch[:, 0] > 0).astype(int)


@pytest.mark.parametrize("fresh", [False, True])
def test_a_folder_as_checkpoint_is_refused_naming_checkpoint(tmp_path, fresh):
    # was a raw IsADirectoryError (reading it, or unlinking it with fresh=True)
    from trustlab.robustness import SmoothedClassifier, certify_dataset

    smooth = SmoothedClassifier(_halfspace, 0.5, 2)
    with pytest.raises(InputError, match=r"^checkpoint: expected a file .*got"):
        certify_dataset(
            smooth, [[1.0]], [1], n0=1, n=10, checkpoint=tmp_path, model_id="h", fresh=fresh
        )
    assert tmp_path.is_dir()


def test_a_binary_file_as_checkpoint_is_another_file(tmp_path):
    # was a raw UnicodeDecodeError from reading its seed as UTF-8 text
    from trustlab.robustness import SmoothedClassifier, certify_dataset

    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage\n")
    smooth = SmoothedClassifier(_halfspace, 0.5, 2)
    with pytest.raises(InputError, match=r"^checkpoint: expected a trustlab certification"):
        certify_dataset(smooth, [[1.0]], [1], n0=1, n=10, checkpoint=path, model_id="h")
    assert path.read_bytes() == b"\xff\xfe\x00garbage\n"


def test_a_checkpoint_under_a_file_is_refused_before_sampling(tmp_path):
    # was a raw FileExistsError from mkdir after the first task (64,640 samples) was drawn
    from trustlab.robustness import SmoothedClassifier, certify_dataset

    (tmp_path / "f").write_text("x")
    drawn = []
    smooth = SmoothedClassifier(lambda b: drawn.append(len(b)) or _halfspace(b), 0.5, 2)
    with pytest.raises(InputError, match=r"^checkpoint: expected a path inside folders, got"):
        certify_dataset(
            smooth, [[1.0]], [1], n0=1, n=10, checkpoint=tmp_path / "f/a/c.jsonl", model_id="h"
        )
    assert drawn == []


def test_a_checkpoint_that_cannot_be_written_is_an_input_error(tmp_path, monkeypatch):
    # a folder that cannot be created (e.g. /proc/x) was a raw OSError
    import pathlib

    from trustlab.robustness import SmoothedClassifier, certify_dataset

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(pathlib.Path, "mkdir", refuse)
    smooth = SmoothedClassifier(_halfspace, 0.5, 2)
    with pytest.raises(InputError, match=r"^checkpoint: expected a file that can be written"):
        certify_dataset(
            smooth, [[1.0]], [1], n0=1, n=10, checkpoint=tmp_path / "d/c.jsonl", model_id="h"
        )
