"""``trustlab explain regions train`` with an unreadable ``--out/_state/state.pt`` (review 52):
it was 'failed: checkpoint_dir: ... choose another checkpoint_dir' (exit 1, an argument the CLI
does not have), with ``--overwrite`` too, which is documented to discard an interrupted run."""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line

pytest.importorskip("torch")
pytest.importorskip("skimage")

TINY = ["--images", "40", "--size", "32", "--max-epochs", "1", "--pretrain-epochs", "0",
        "--segments", "8"]  # fmt: skip


@pytest.fixture
def damaged(tmp_path):
    folder = tmp_path / "m"
    (folder / "_state").mkdir(parents=True)
    (folder / "_state" / "state.pt").write_bytes(b"not a torch file")
    return folder


def test_an_unreadable_state_is_one_out_line(run, damaged):
    code, _, err = run("explain", "regions", "train", *TINY, "--out", damaged)
    line = one_line(err)
    assert code == 2, err
    assert line.startswith("trustlab: error: --out: ") and "state.pt" in line
    assert "--overwrite" in line and "checkpoint_dir" not in line
    assert not (damaged / "model").exists()


def test_overwrite_discards_an_unreadable_state(run, damaged):
    code, stdout, err = run("explain", "regions", "train", *TINY, "--out", damaged, "--overwrite",
                            "--json")  # fmt: skip
    assert code == 0, err
    assert "discarding the interrupted run" in err and "could not be read" in err
    assert json.loads(stdout)["history"]["epochs"] == [1]
    assert (damaged / "model").is_dir() and not (damaged / "_state").exists()


def test_a_state_of_other_settings_names_overwrite(run, tmp_path):
    """The refusal of another fit's state says how to start afresh with the CLI's own option."""
    from trustlab.explain.regions import RegionSparseClassifier, bam_lite

    folder = tmp_path / "other"
    ds = bam_lite(16, size=32, random_state=9)
    model = RegionSparseClassifier(n_segments=8, pretrain_epochs=0, max_epochs=1, random_state=9,
                                   checkpoint_dir=folder / "_state")  # fmt: skip
    model.fit(ds.images, ds.labels)  # leaves its state (the CLI removes it once it has saved)
    assert (folder / "_state" / "state.pt").is_file()
    code, _, err = run("explain", "regions", "train", *TINY, "--out", folder)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out: ")
    assert "--overwrite" in one_line(err)


def test_evaluate_names_every_file_it_writes(run, tmp_path):
    """The page's numbers (regions.json, which the page's footer points to) were written but left
    out of the 'wrote ...' line (review 52)."""
    out = tmp_path / "e"
    code, stdout, err = run("explain", "regions", "evaluate", "--checkpoint", "blackbox", "--n",
                            "3", "--deltas", "none", "--out", out)  # fmt: skip
    assert code == 0, err
    line = next(x for x in stdout.splitlines() if x.startswith("wrote "))
    files = sorted(p.name for p in out.iterdir())
    assert "regions.json" in files
    assert sorted(line.removeprefix("wrote ").rsplit(" to ", 1)[0].split(", ")) == files


def test_train_help_says_a_baseline_starts_again(run):
    """The help said any interrupted run resumes; a baseline keeps no training state."""
    from trustlab.explain.regions import BlackBoxClassifier

    assert "checkpoint_dir" not in BlackBoxClassifier().get_params()  # nothing to resume from
    code, stdout, _ = run("explain", "regions", "train", "--help")
    text = " ".join(stdout.split())
    assert code == 0 and "resumes an interrupted P2P run" in text
    assert "a baseline starts again" in text
