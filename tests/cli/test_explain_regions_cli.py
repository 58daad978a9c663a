"""``trustlab explain regions``: train (resumable), predict (overlays), evaluate (with its page),
one-line errors; the page module on its own."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest

from cli_helpers import InterruptAt, one_line
from cli_helpers import run_quiet as _cli

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    BlackBoxClassifier,
    RegionsEvaluation,
    RegionSparseClassifier,
    bam_lite,
)

BASELINE_TINY = ["--images", "48", "--size", "32", "--max-epochs", "1"]
TINY = [*BASELINE_TINY, "--pretrain-epochs", "1", "--segments", "16"]
PAGE_TITLES = (
    "Accuracy against kept area",
    "Localisation of the object",
    "Deletion and insertion fidelity",
    "Certainty threshold (delta) ablation",
    "Ablations: covariance off, watershed superpixels",
    "Selected regions of a few test images",
)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _shapes(n, seed, size=32):
    """The generated images of --data bam-lite-shapes and their class names (the oracle's copy)."""
    ds = bam_lite(n, size=size, object_source="shapes", random_state=seed)
    return ds, np.asarray(ds.class_names)[ds.labels]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("regions") / "m"
    code, stdout, err = _cli("explain", "regions", "train", *TINY, "--out", folder, "--json")
    assert code == 0, err
    return folder, json.loads(stdout)


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory):
    """Tiny models saved by the library: full P2P, P2P without covariance, fixed-tau P2P,
    Blackbox-Pixel."""
    root = tmp_path_factory.mktemp("saved")
    ds, y = _shapes(48, 0)
    small = dict(n_segments=16, pretrain_epochs=1, max_epochs=1, random_state=0)
    models = {
        "p2p_dynamic": RegionSparseClassifier(**small),
        "p2p_no_covariance": RegionSparseClassifier(covariance=False, **small),
        "p2p_fixed": RegionSparseClassifier(tau=0.3, **small),
        "blackbox_pixel": BlackBoxClassifier(kept_pixels=0.25, max_epochs=1, random_state=0),
    }
    for name, m in models.items():
        m.fit(ds.images, y).save(root / name)
    return root, models


# ------------------------------------------------------------------------------------------ train


def test_train_record_matches_a_recomputation_and_a_rerun_is_refused(trained, run):
    folder, record = trained
    assert json.loads((folder / "training.json").read_text()) == record
    assert record["kind"] == "p2p" and record["params"]["n_segments"] == 16
    assert (record["n_train"], record["n_test"]) == (40, 8)  # 20 % of 12 per shape held out
    assert record["history"]["epochs"] == [1, 2]  # one pretraining epoch, one joint epoch
    assert (folder / "training.png").is_file() and not (folder / "_state").exists()
    # the held-out accuracy, recomputed from the saved model on the same split
    model = RegionSparseClassifier.load(folder / "model")
    ds = bam_lite(48, size=32, object_source="shapes", random_state=0)
    _, test = ds.split(0.2, random_state=0)
    truth = np.asarray(test.class_names)[test.labels]
    assert record["test_accuracy"] == pytest.approx(np.mean(model.predict(test.images) == truth))
    code, _, err = run("explain", "regions", "train", *TINY, "--out", folder)
    assert code == 2 and "--overwrite" in one_line(err)


def test_an_interrupted_run_resumes_to_the_same_model(trained, run, tmp_path, monkeypatch):
    from safetensors.numpy import load_file

    from trustlab.cli import explain_regions

    folder = tmp_path / "m"
    with monkeypatch.context() as patch:
        patch.setattr(explain_regions, "progress", InterruptAt(1))
        code, _, err = run("explain", "regions", "train", *TINY, "--out", folder)
    assert code == 130  # interrupted
    assert (folder / "_state" / "state.pt").is_file() and not (folder / "model").exists()
    code, stdout, err = run("explain", "regions", "train", *TINY, "--out", folder, "--json")
    assert code == 0 and "resumed the interrupted run" in err and "after epoch 1" in err
    assert json.loads(stdout)["history"]["epochs"] == [1, 2]
    # resuming after epoch 1 ends where the uninterrupted run ended, weight for weight
    resumed = load_file(folder / "model" / "weights.safetensors")
    whole = load_file(trained[0] / "model" / "weights.safetensors")
    assert resumed.keys() == whole.keys()
    for key, value in whole.items():
        np.testing.assert_array_equal(resumed[key], value, err_msg=key)


def test_overwrite_discards_an_interrupted_run_of_other_settings(run, tmp_path, monkeypatch):
    """A state left by a run of other settings blocked ``--overwrite`` too ("delete it to start
    afresh"), after a line saying it was being resumed."""
    from trustlab.cli import explain_regions

    folder = tmp_path / "m"
    with monkeypatch.context() as patch:
        patch.setattr(explain_regions, "progress", InterruptAt(1))
        assert run("explain", "regions", "train", *TINY, "--out", folder)[0] == 130
    other = [*TINY, "--seed", "4"]  # other data: another state
    code, _, err = run("explain", "regions", "train", *other, "--out", folder)
    assert code == 2 and "start afresh" in one_line(err) and "resum" not in err
    code, stdout, err = run("explain", "regions", "train", *other, "--out", folder, "--overwrite",
                            "--json")  # fmt: skip
    assert code == 0, err
    assert "discarding the interrupted run" in err and "resum" not in err
    assert json.loads(stdout)["history"]["epochs"] == [1, 2]  # trained from the first epoch
    assert not (folder / "_state").exists()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--tau", "abc"], "--tau"),
        (["--tau", "1.5"], "--tau"),
        (["--data", "mnist"], "--data"),
        (["--size", "36"], "--size"),  # not a multiple of 8
        (["--pixels", "1.5", "--blackbox"], "--pixels"),
    ],
)
def test_bad_train_options_are_one_line(run, tmp_path, args, option):
    tiny = BASELINE_TINY if "--blackbox" in args else TINY  # P2P's options are refused there
    # an option given twice is itself refused (since 74879d5): args replace tiny's own value
    tiny = [v for i in range(0, len(tiny), 2) if tiny[i] not in args for v in tiny[i : i + 2]]
    code, _, err = run("explain", "regions", "train", *tiny, *args, "--out", tmp_path / "t")
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}:"), err


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--tau", "bogus"], "--tau"),
        (["--tau", "dynamic"], "--tau"),  # given, even at its default value
        (["--delta", "0.9"], "--delta"),
        (["--segments", "16"], "--segments"),
        (["--segmentation", "watershed"], "--segmentation"),
        (["--no-covariance"], "--no-covariance"),
        (["--covariance"], "--covariance"),
        (["--pretrain-epochs", "1"], "--pretrain-epochs"),
    ],
)
@pytest.mark.parametrize("mode", [["--blackbox"], ["--pixels", "0.25"]])
def test_p2p_options_are_refused_with_a_baseline(run, tmp_path, monkeypatch, args, option, mode):
    """--blackbox/--pixels trained the baseline and dropped P2P's options (--tau bogus: exit 0)."""
    from trustlab.cli import explain_regions

    monkeypatch.setattr(explain_regions, "_images", _no_work)
    out = tmp_path / "t"
    code, _, err = run("explain", "regions", "train", *BASELINE_TINY, *mode, *args, "--out", out)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"trustlab: error: {option}:") and mode[0] in line, err
    assert not out.exists()


def _no_work(*args, **kwargs):
    raise AssertionError("the options are checked before any work")


# ---------------------------------------------------------------------------------------- predict


def test_predict_writes_overlays_and_agrees_with_the_library(trained, run, tmp_path):
    from matplotlib.image import imread

    folder, _ = trained
    out = tmp_path / "p"
    code, stdout, err = run("explain", "regions", "predict", "--model", folder, "--n", "5",
                            "--seed", "4", "--out", out, "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(stdout)
    assert json.loads((out / "predictions.json").read_text()) == data
    assert {"labels", "confidence", "tau", "kept_fraction", "certain", "mode", "true_labels",
            "accuracy"} <= set(data)  # fmt: skip
    ds, truth = _shapes(5, 4)
    r = RegionSparseClassifier.load(folder / "model").explain(ds.images)
    assert data["labels"] == r.labels and data["true_labels"] == truth.tolist()
    np.testing.assert_allclose(data["kept_fraction"], r.kept_fraction, rtol=0, atol=1e-12)
    np.testing.assert_allclose(data["confidence"], r.confidence, rtol=1e-12)
    assert data["accuracy"] == pytest.approx(np.mean(np.asarray(r.labels) == truth))
    overlays = sorted((out / "overlays").glob("overlay_*.png"))
    assert [p.name for p in overlays] == [f"overlay_{i:04d}.png" for i in range(5)]
    assert imread(overlays[0]).shape[:2] == (128, 128)  # 32 pixels, 4 times upscaled
    assert (out / "regions.png").is_file()
    # the same images from a .npy file give the same predictions
    np.save(tmp_path / "x.npy", ds.images)
    code, stdout, err = run("explain", "regions", "predict", "--model", folder,
                            "--images", tmp_path / "x.npy", "--json")  # fmt: skip
    assert code == 0, err
    again = json.loads(stdout)
    assert again["labels"] == data["labels"] and "true_labels" not in again


@pytest.mark.parametrize(
    ("args", "option", "says"),
    [
        (["--delta", "1.5"], "--delta", "(0, 1]"),
        (["--images", "wrong.npy"], "--images", "32x32"),
        (["--images", "missing.npy"], "--images", ".npy"),
        (["--checkpoint", "p2p_dynamic"], "--model", "either"),
    ],
)
def test_bad_predict_options_are_one_line(trained, run, tmp_path, args, option, says):
    np.save(tmp_path / "wrong.npy", np.zeros((2, 3, 64, 64), dtype=np.float32))
    args = [str(tmp_path / a) if a.endswith(".npy") else a for a in args]
    code, _, err = run("explain", "regions", "predict", "--model", trained[0], *args)
    assert code == 2
    line = one_line(err)
    assert line.startswith(f"trustlab: error: {option}:") and says in line, err


def test_predict_refuses_a_black_box_an_unknown_checkpoint_and_delta_of_a_fixed_tau(
    saved_models, run
):
    root, _ = saved_models
    code, _, err = run("explain", "regions", "predict", "--model", root / "p2p_fixed",
                       "--delta", "0.9")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --delta: this model keeps")
    code, _, err = run("explain", "regions", "predict", "--model", root / "blackbox_pixel")
    assert code == 2 and "selects no regions" in one_line(err)
    code, _, err = run("explain", "regions", "predict", "--checkpoint", "nope")
    assert code == 2 and one_line(err).startswith("trustlab: error: --checkpoint:")


# --------------------------------------------------------------------------------------- evaluate


def test_evaluate_agrees_with_the_library_and_writes_the_page(saved_models, run, tmp_path):
    root, models = saved_models
    out = tmp_path / "e"
    given = [a for name in models for a in ("--model", root / name)]
    code, stdout, err = run("explain", "regions", "evaluate", *given, "--n", "12",
                            "--deltas", "0.9,0.99", "--out", out, "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(stdout)
    assert json.loads((out / "evaluation.json").read_text()) == data
    assert data["n_images"] == 12 and [r["model"] for r in data["accuracy"]] == list(models)
    # the accuracy of every model, recomputed by the library on the same fresh images (seed 3)
    ds, truth = _shapes(12, 3)
    for row in data["accuracy"]:
        want = np.mean(models[row["model"]].predict(ds.images) == truth)
        assert row["accuracy"] == pytest.approx(want), row["model"]
    assert data["object_fraction"] == pytest.approx(ds.masks.mean())
    assert {(r["model"], r["delta"]) for r in data["delta_ablation"]} == {
        (m, d) for m in ("p2p_dynamic", "p2p_no_covariance") for d in (0.9, 0.99)
    }
    html = (out / "regions.html").read_text()
    for title in PAGE_TITLES:
        assert title in html, title
    assert (out / "regions_evaluation.png").is_file()
    page = {s["id"]: s for s in json.loads((out / "regions.json").read_text())["sections"]}
    assert page["ablations"]["data"]["reference"] == "p2p_dynamic"
    assert list(page["ablations"]["data"]["ablations"]) == ["p2p_no_covariance"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--checkpoint", "nope"], "--checkpoint"),
        (["--deltas", "0.9,1.5"], "--deltas"),
        (["--deltas", "high"], "--deltas"),
        (["--n", "0"], "--n"),
        (["--data", "bam-lite-digits"], "--data"),  # the models know shapes, not digits
    ],
)
def test_bad_evaluate_options_are_one_line(saved_models, run, args, option):
    root, _ = saved_models
    code, _, err = run("explain", "regions", "evaluate", "--model", root / "p2p_dynamic", *args)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}:"), err


def test_predict_with_zero_images_names_its_own_option(trained, run):
    """predict's number of generated images is --n; --images is its .npy of images (the error
    named --images)."""
    folder, _ = trained
    code, _, err = run("explain", "regions", "predict", "--model", folder, "--n", "0")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --n: expected an integer >= 1, got 0"), err


def _shipped():
    from trustlab.explain.regions import CHECKPOINTS, checkpoint_info

    names = []
    for name in CHECKPOINTS:
        with contextlib.suppress(OSError, ValueError):
            checkpoint_info(name)
            names.append(name)
    return names


@pytest.mark.skipif(len(_shipped()) < 2, reason="the shipped checkpoints are not trained yet")
def test_evaluate_every_shipped_checkpoint_by_default(run, tmp_path):
    code, stdout, err = run("explain", "regions", "evaluate", "--n", "8", "--deltas", "0.99",
                            "--out", tmp_path / "e", "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(stdout)
    assert [r["model"] for r in data["accuracy"]] == _shipped()
    assert data["n_images"] == 8 and (tmp_path / "e" / "regions.html").is_file()


# ------------------------------------------------------------------------------------------- page


def _evaluation(**changes):
    rows = {
        "dataset": "hand-made",
        "n_images": 4,
        "object_fraction": 0.1,
        "accuracy": (
            {"model": "p2p_dynamic", "kind": "dynamic", "accuracy": 0.75, "mean_kept": 0.2,
             "mean_tau": 0.25, "certain": 1.0},
            {"model": "p2p_watershed", "kind": "dynamic", "accuracy": 0.5, "mean_kept": 0.3,
             "mean_tau": 0.35, "certain": 0.5},
        ),
        "localisation": (
            {"model": "p2p_dynamic", "precision": 0.7, "iou": 0.4, "pxap": 0.6,
             "random_precision": 0.125, "empty_masks": 0.0},
            {"model": "p2p_watershed", "precision": float("nan"), "iou": 0.0, "pxap": 0.1,
             "random_precision": None, "empty_masks": 1.0},
        ),
        "fidelity": (
            {"model": "p2p_dynamic", "kind": "deletion", "fractions": [0.2],
             "importance": [0.25], "random": [0.875]},
        ),
        "delta_ablation": (),
    }  # fmt: skip
    return RegionsEvaluation(**{**rows, **changes})


def test_build_page_refuses_what_is_not_an_evaluation():
    from trustlab.audit.sections.regions import build_page

    with pytest.raises(InputError, match="^evaluation: expected a RegionsEvaluation"):
        build_page({"accuracy": ()})
    with pytest.raises(InputError, match="^ablations:"):
        build_page(_evaluation(), ablations={"p2p_fixed": "not evaluated"})


def test_page_tables_hold_the_evaluation_and_their_differences(tmp_path):
    from trustlab.audit.sections.regions import JSON_NAME, build_page, write_page

    page = build_page(_evaluation())
    sections = {s.id: s for s in page.sections}
    # no explanations: no example figure; p2p_watershed is a default ablation row
    assert list(sections) == ["accuracy", "localisation", "fidelity", "delta", "ablations"]
    loc = sections["localisation"].blocks[1]
    assert loc.rows[0][1:4] == [0.7, 0.125, pytest.approx(0.575)]
    assert loc.rows[1][1:4] == [None, None, None]  # NaN precision and no control: n/a
    fid = sections["fidelity"].blocks[1]
    assert fid.rows == [["p2p_dynamic", "deletion", 0.2, 0.25, 0.875, -0.625]]
    abl = sections["ablations"].blocks[1]
    assert [r[0] for r in abl.rows] == ["p2p_dynamic", "p2p_watershed"]
    assert abl.rows[1][3] == pytest.approx(-0.25) and abl.rows[1][6] is None
    html, js = write_page(_evaluation(), tmp_path, meta={"seed": 3})
    assert html.name == "regions.html" and js.name == JSON_NAME
    text = html.read_text()
    for title in PAGE_TITLES[:-1]:
        assert title in text, title
    assert json.loads(js.read_text())["meta"]["seed"] == 3


@pytest.mark.parametrize("data", ["bam-lite-digits", "bam-lite-scene"])
def test_predict_reports_no_accuracy_against_labels_the_model_does_not_know(trained, run, data):
    # a shapes model on digit or scene images: its predictions are shape names, so an accuracy
    # against the digits or scenes would be 0 by construction (it used to be reported as 0.000)
    code, stdout, err = run("explain", "regions", "predict", "--model", trained[0],
                            "--data", data, "--n", "3", "--json")  # fmt: skip
    assert code == 0, err
    payload = json.loads(stdout)
    assert "accuracy" not in payload and "true_labels" not in payload
    assert len(payload["labels"]) == 3 and "no accuracy" in err
    code, stdout, _ = run("explain", "regions", "predict", "--model", trained[0], "--n", "3")
    assert code == 0 and "accuracy" in stdout and "no accuracy" not in stdout
