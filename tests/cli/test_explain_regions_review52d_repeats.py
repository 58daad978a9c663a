"""``trustlab explain regions`` fix pass 52d: a model named twice in ``evaluate`` is refused (it was
evaluated twice, as X and X_2, against other random controls), and ``train`` with too few images
per class to split names ``--images`` (the refusal named only ``--test-size``, at its default)."""

from __future__ import annotations

import pytest

from cli_helpers import one_line

pytest.importorskip("torch")
pytest.importorskip("skimage")

EVALUATE = ["explain", "regions", "evaluate", "--n", "3", "--deltas", "none"]


def test_a_checkpoint_named_twice_is_refused(run, tmp_path):
    code, stdout, err = run(*EVALUATE, "--checkpoint", "blackbox", "--checkpoint", "blackbox",
                            "--out", tmp_path / "e")  # fmt: skip
    assert code == 2, err
    assert one_line(err) == (
        "trustlab: error: --checkpoint: expected each checkpoint once, got 'blackbox repeated'"
    )
    assert "blackbox_2" not in stdout and not (tmp_path / "e").exists()


def test_a_model_folder_named_twice_is_refused_two_checkpoints_are_not(run, tmp_path):
    from trustlab.explain.regions import load_checkpoint

    folder = tmp_path / "bb"
    load_checkpoint("blackbox").save(folder)
    again = tmp_path / "bb" / ".." / "bb"  # the same folder spelt another way
    code, _, err = run(*EVALUATE, "--model", folder, "--model", again)
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --model: expected each model folder once, got ")
    assert line.endswith(f"{folder.resolve()} repeated'")
    code, stdout, err = run(*EVALUATE, "--checkpoint", "blackbox", "--checkpoint", "p2p_fixed")
    assert code == 0, err
    assert "blackbox_2" not in stdout and "p2p_fixed" in stdout


@pytest.mark.parametrize(("images", "each"), [("4", "1"), ("6", "1 to 2")])
def test_train_with_too_few_images_per_class_names_images(run, tmp_path, images, each):
    code, _, err = run("explain", "regions", "train", "--images", images, "--size", "32",
                       "--out", tmp_path / "m")  # fmt: skip
    assert code == 2, err
    line = one_line(err)
    assert line.startswith(f"trustlab: error: --images: {images} images ({each} per class of 4) ")
    assert "--test-size 0.2" in line
    assert not (tmp_path / "m" / "model").exists()


def test_train_with_a_test_size_out_of_range_still_names_it(run, tmp_path):
    code, _, err = run("explain", "regions", "train", "--images", "40", "--size", "32",
                       "--test-size", "1.5", "--out", tmp_path / "m")  # fmt: skip
    assert code == 2
    assert one_line(err) == "trustlab: error: --test-size: expected a number in (0, 1), got 1.5"
