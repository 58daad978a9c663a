"""``trustlab explain regions predict/evaluate --model DIR``: a damaged or hand-edited
training.json in DIR, and a file where predict writes its overlays, are one-line errors naming
--model/--out (they were 'unexpected failure' tracebacks, exit 1, or blamed a --data never given).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import RegionSparseClassifier, bam_lite  # noqa: E402


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A train-like folder: model/ saved by the library (tiny) beside training.json."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ds = bam_lite(16, size=32, object_source="shapes", random_state=0)
        y = np.asarray(ds.class_names)[ds.labels]
        model = RegionSparseClassifier(n_segments=8, pretrain_epochs=0, max_epochs=1,
                                       random_state=0).fit(ds.images, y)  # fmt: skip
    finally:
        torch.set_num_threads(old)
    folder = tmp_path_factory.mktemp("record") / "run"
    model.save(folder / "model")
    return folder, model


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ("{bad", "holds no readable JSON"),
        ("{}", "holds other data, not the record"),
        ("[1, 2]", "holds other data, not the record"),
        ('{"data": "x"}', "holds other data, not the record"),
        ('{"data": {"name": "bogus"}}', "holds other data, not the record"),
    ],
)
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_damaged_training_record_is_one_line_naming_model(run, run_folder, record, says, command):
    folder, _ = run_folder
    (folder / "training.json").write_text(record)
    code, _, err = run("explain", "regions", command, "--model", folder, "--n", "2")
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --model:") and says in line, err
    assert "training.json" in line and "--data" not in line


def test_a_good_training_record_still_sets_the_data(run, run_folder):
    folder, _ = run_folder
    (folder / "training.json").write_text('{"data": {"name": "bam-lite-digits"}}')
    code, stdout, err = run("explain", "regions", "predict", "--model", folder, "--n", "2")
    assert code == 0 and "bam-lite-digits is labelled" in stdout + err, err


def test_a_file_named_overlays_in_out_is_refused_before_any_output(run, run_folder, tmp_path):
    folder, _ = run_folder
    (folder / "training.json").unlink(missing_ok=True)
    out = tmp_path / "pred"
    out.mkdir()
    (out / "overlays").write_text("not a folder")
    code, _, err = run("explain", "regions", "predict", "--model", folder, "--n", "2",
                       "--out", out)  # fmt: skip
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --out:") and "overlays" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["overlays"]  # nothing half-written


def test_save_overlays_onto_a_file_names_folder(run_folder, tmp_path):
    folder, model = run_folder
    images = bam_lite(2, size=32, object_source="shapes", random_state=1).images
    result = model.explain(images)
    (tmp_path / "f").write_text("x")
    for target in (tmp_path / "f", tmp_path / "f" / "sub"):
        with pytest.raises(InputError, match=r"^folder: expected a folder"):
            result.save_overlays(target)


def test_evaluate_model_dot_names_the_folder(run, run_folder, monkeypatch):
    # --model . (run inside the train folder) gave a model named '' in every table
    folder, _ = run_folder
    (folder / "training.json").unlink(missing_ok=True)
    monkeypatch.chdir(folder)
    code, stdout, err = run("explain", "regions", "evaluate", "--model", ".", "--n", "2",
                            "--deltas", "none", "--json")  # fmt: skip
    assert code == 0, err
    assert [r["model"] for r in json.loads(stdout)["accuracy"]] == [folder.name]


def test_a_damaged_model_folder_says_why(run, run_folder, tmp_path):
    # unreadable weights were reported as 'expected a folder written by ... train' (the reason,
    # which the library gives, was dropped while trying the other model class)
    folder, model = run_folder
    broken = tmp_path / "broken"
    model.save(broken)
    (broken / "weights.safetensors").write_bytes(b"garbage")
    code, _, err = run("explain", "regions", "predict", "--model", broken, "--n", "2")
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"trustlab: error: --model: {broken}: could not read weights"), err
