"""``trustlab watermark``: synth, train (resumable), predict (JSON per image, heatmaps, contact
sheet), describe, evaluate (with its page), export; one-line errors; the page module on its own."""

from __future__ import annotations

import json
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import one_line
from cli_helpers import run_quiet as _cli
from wm_tiny_model import tiny_predictor

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")
pytest.importorskip("imwatermark")

from PIL import Image  # noqa: E402

from trustlab.audit.sections.watermark import (  # noqa: E402
    build_contact_sheet,
    build_evaluation_page,
    heatmap_overlay,
)
from trustlab.cli import watermark as cli_wm  # noqa: E402
from trustlab.errors import ConfigError, InputError  # noqa: E402
from trustlab.watermark import (  # noqa: E402
    LEVELS,
    WatermarkPredictor,
    evaluate_predictions,
    load_watermark_dataset,
    parse_description,
    synthesize,
)
from trustlab.watermark.checkpoints import TRAIN_DATA  # noqa: E402

TINY = ["--input-size", "64", "--widths", "4,8,8,8"]
SYNTH = ["--n", "6", "--seed", "15", "--kinds", "logo,text,pattern,dwtDctSvd",
         "--clean-fraction", "0.2"]  # fmt: skip
PAGE_TITLES = (
    "Visibility against the controls",
    "Location of the watermark",
    "Visibility per kind of mark",
    "Invisible marks: detection AUROC",
    "Description metrics (WMarkGPT Table 1)",
)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny predictor trained by the library and saved (the --model of the tests)."""
    return tiny_predictor(tmp_path_factory.mktemp("wm") / "model", 8, 0)


@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wm") / "data"
    code, stdout, err = _cli("watermark", "synth", *SYNTH, "--out", folder, "--json")
    assert code == 0, err
    return folder, json.loads(stdout)


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory, synth_dir):
    """PNGs of two sizes and a JPEG."""
    folder = tmp_path_factory.mktemp("wm") / "images"
    folder.mkdir()
    ds = load_watermark_dataset(synth_dir[0])
    Image.fromarray(ds.images[0]).save(folder / "first.png")
    Image.fromarray(ds.images[1][:200, 40:]).save(folder / "cropped.png")
    Image.fromarray(ds.images[2]).resize((180, 120)).save(folder / "small.jpg", quality=90)
    return folder


@pytest.fixture(scope="module")
def predicted(tmp_path_factory, image_folder, model_dir):
    out = tmp_path_factory.mktemp("wm") / "pred"
    code, stdout, err = _cli(
        "watermark", "predict", image_folder, "--model", model_dir, "--out", out, "--json"
    )
    assert code == 0, err
    return out, stdout


# ---------------------------------------------------------------------------------- synth


def test_synth_writes_the_generators_images_and_records(synth_dir):
    folder, payload = synth_dir
    oracle = synthesize(6, random_state=15, kinds=("logo", "text", "pattern", "dwtDctSvd"),
                        clean_fraction=0.2)  # fmt: skip
    back = load_watermark_dataset(folder)
    assert np.array_equal(back.images, oracle.images)
    assert back.levels == oracle.levels
    assert payload["n_images"] == 6 and payload["first_image"] == "00000.png"
    assert payload["kind_counts"] == oracle.kind_counts
    records = json.loads((folder / "records.json").read_text())
    assert [r["image"] for r in records] == sorted(p.name for p in (folder / "images").iterdir())
    for r, level in zip(records, oracle.levels, strict=True):
        answer = r["conversations"][1]["value"]
        assert answer.endswith(f"The watermark visibility is: {level}.")
        assert r["structured"]["level"] == level
    assert (folder / "watermark_dataset.png").stat().st_size > 0


def test_synth_refuses_its_own_folder_without_overwrite(synth_dir, run):
    code, _, err = run("watermark", "synth", *SYNTH, "--out", synth_dir[0])
    assert code == 2 and "--out" in one_line(err) and "--overwrite" in one_line(err)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--kinds", "logo,sparkle"], "--kinds"),
        (["--clean-fraction", "1.5"], "--clean-fraction"),
        (["--size", "128"], "--size"),
        (["--n", "0"], "--n"),
    ],
)
def test_synth_bad_input_is_one_line_naming_the_option(args, option, run, tmp_path):
    code, _, err = run("watermark", "synth", *args, "--out", tmp_path / "d")
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}:")


# -------------------------------------------------------------------------------- predict


def test_predict_writes_one_json_per_image_equal_to_the_library(predicted, image_folder,
                                                                model_dir):  # fmt: skip
    out, stdout = predicted
    payload = json.loads(stdout)  # the whole of stdout is one JSON document
    files = sorted(image_folder.iterdir())
    assert payload["n_images"] == 3
    pixels = [np.array(Image.open(f).convert("RGB")) for f in files]
    assert {p.shape for p in pixels} == {(256, 256, 3), (200, 216, 3), (120, 180, 3)}
    oracle = WatermarkPredictor.load(model_dir).predict(pixels)
    for i, f in enumerate(files):
        rec = json.loads((out / f"{f.stem}.json").read_text())
        assert rec["level"] == oracle.levels[i]
        assert rec["score"] == pytest.approx(oracle.scores[i], abs=1e-6)
        assert rec["expected_score"] == pytest.approx(oracle.expected_scores[i], abs=1e-6)
        assert rec["regressed_score"] == pytest.approx(oracle.regressed_scores[i], abs=1e-6)
        assert rec["flip_average"] is True
        assert rec["content_type"] == oracle.content_types[i]
        assert rec["cell"] == oracle.cells[i] and rec["orientation"] == oracle.orientations[i]
        box = [int(v) for v in oracle.boxes[i]]
        assert rec["box"] == (None if min(box) < 0 else box)
        assert [rec["level_probabilities"][lv] for lv in LEVELS] == pytest.approx(
            oracle.level_probabilities[i], abs=1e-9
        )
        assert (rec["height"], rec["width"]) == pixels[i].shape[:2]
        parsed = parse_description(rec["description"])
        assert parsed.level == oracle.levels[i]
        overlay = np.asarray(Image.open(out / "heatmaps" / f"{f.stem}.png"))
        assert overlay.shape == pixels[i].shape
        assert rec == payload["images"][i]
    assert json.loads((out / "predictions.json").read_text()) == payload


def test_contact_sheet_names_every_image(predicted, image_folder):
    out, _ = predicted
    html = (out / "contact_sheet.html").read_text()
    for f in image_folder.iterdir():
        assert f.name in html
    page = json.loads((out / "contact_sheet.json").read_text())
    assert [s["id"] for s in page["sections"]] == ["overview", "image-0", "image-1", "image-2"]


def test_describe_prints_the_paragraph_predict_wrote(predicted, image_folder, model_dir, run):
    out, _ = predicted
    image = image_folder / "first.png"
    code, stdout, err = run("watermark", "describe", image, "--model", model_dir)
    assert code == 0, err
    rec = json.loads((out / "first.json").read_text())
    assert stdout.strip() == rec["description"]
    code, stdout, _ = run("watermark", "describe", image, "--model", model_dir, "--json",
                          "--question", "Where is the watermark?", "--seed", "4")  # fmt: skip
    answer = json.loads(stdout)
    assert answer["question"] == "Where is the watermark?"
    assert answer["description"].endswith(f"The watermark visibility is: {rec['level']}.")


def test_describe_without_model_uses_the_shipped_predictor(image_folder, run):
    from trustlab.watermark.checkpoints import load_checkpoint

    code, stdout, err = run("watermark", "describe", image_folder / "first.png")
    try:
        load_checkpoint()
    except ConfigError:
        assert code == 2 and "shipped watermark predictor" in one_line(err)
    else:
        assert code == 0 and "The watermark visibility is:" in stdout


@pytest.mark.parametrize("case", ["missing", "unreadable", "threshold", "empty"])
def test_predict_bad_input_is_one_line_naming_the_option(case, run, tmp_path, model_dir,
                                                         image_folder):  # fmt: skip
    args = [image_folder]
    option = "IMAGES"
    if case == "missing":
        args = [tmp_path / "nowhere.png"]
    elif case == "unreadable":
        (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a PNG")
        args = [image_folder, tmp_path / "broken.png"]
    elif case == "threshold":
        args, option = [image_folder, "--threshold", "2"], "--threshold"
    else:
        (tmp_path / "empty").mkdir()
        args = [tmp_path / "empty"]
    code, _, err = run("watermark", "predict", *args, "--model", model_dir, "--out",
                       tmp_path / "p")  # fmt: skip
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}:")
    assert not (tmp_path / "p" / "predictions.json").exists()


def test_predict_reruns_only_with_overwrite_and_drops_the_earlier_files(
    run, tmp_path, model_dir, image_folder
):
    out = tmp_path / "p"
    code, _, err = run("watermark", "predict", image_folder, "--model", model_dir, "--out", out)
    assert code == 0, err
    assert {p.name for p in out.glob("*.json")} >= {"first.json", "cropped.json", "small.json"}
    again = ["watermark", "predict", image_folder / "first.png", "--model", model_dir, "--out", out]
    code, _, err = run(*again)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out:")
    code, _, err = run(*again, "--overwrite")
    assert code == 0, err
    names = {p.name for p in out.glob("*.json")}
    assert names == {"first.json", "predictions.json", "contact_sheet.json"}
    assert [p.name for p in (out / "heatmaps").iterdir()] == ["first.png"]
    assert "cropped.png" not in (out / "contact_sheet.html").read_text()


def test_predict_never_replaces_the_users_own_files_without_overwrite(
    run, tmp_path, model_dir, image_folder
):
    """An --out beside the images: photo.json and heatmaps/photo.png of the user's were
    replaced (only predictions.json and contact_sheet.html were looked for)."""
    folder = tmp_path / "mine"
    (folder / "heatmaps").mkdir(parents=True)
    image = folder / "photo.png"
    image.write_bytes((image_folder / "first.png").read_bytes())
    (folder / "photo.json").write_text('{"my": "annotations"}')
    (folder / "heatmaps" / "photo.png").write_text("mine")
    code, _, err = run("watermark", "predict", image, "--model", model_dir, "--out", folder)
    assert code == 2 and one_line(err).startswith(f"trustlab: error: --out: {folder} already")
    assert "photo.json, heatmaps/photo.png" in one_line(err)
    assert (folder / "photo.json").read_text() == '{"my": "annotations"}'
    assert (folder / "heatmaps" / "photo.png").read_text() == "mine"
    code, _, err = run("watermark", "predict", image, "--model", model_dir, "--out", folder,
                       "--overwrite")  # fmt: skip
    assert code == 0, err
    assert json.loads((folder / "photo.json").read_text())["name"] == "photo"


@pytest.mark.parametrize("mode", ["I;16", "I", "F"])
def test_deep_grayscale_images_are_read_as_their_8_bit_picture(tmp_path, mode):
    """Pillow's RGB conversion clips a 16-bit image's values above 255: a 16-bit PNG was read
    almost white (its prediction with it)."""
    gray = np.random.default_rng(0).integers(0, 256, size=(24, 32), dtype=np.uint8)
    Image.fromarray(gray).save(tmp_path / "gray.png")
    if mode == "I;16":
        deep = Image.fromarray(gray.astype(np.uint16) * 257)  # the full 16-bit range
        deep.save(tmp_path / "deep.png")
        assert Image.open(tmp_path / "deep.png").mode.startswith("I")
        path = tmp_path / "deep.png"
    else:  # 32-bit integer and float images, as TIFF-like sources give them (saved as TIFF)
        values = gray.astype(np.int32) if mode == "I" else gray.astype(np.float32) / 255.0
        Image.fromarray(values).save(tmp_path / "deep.tif")
        path = tmp_path / "deep.tif"
    expected = cli_wm._read_image(tmp_path / "gray.png", "IMAGES")
    np.testing.assert_array_equal(cli_wm._read_image(path, "IMAGES"), expected)


def test_a_folder_that_is_no_model_is_refused(run, tmp_path, image_folder):
    code, _, err = run("watermark", "describe", image_folder / "first.png", "--model", tmp_path)
    assert code == 2 and one_line(err).startswith("trustlab: error: --model:")


def test_a_model_folder_with_a_corrupt_model_json_is_refused(run, tmp_path, image_folder):
    """A model.json that is not JSON was a raw JSONDecodeError (exit 1)."""
    (tmp_path / "model.json").write_text("{not json")
    (tmp_path / "weights.safetensors").write_bytes(b"")
    code, _, err = run("watermark", "describe", image_folder / "first.png", "--model", tmp_path)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --model: could not read model.json as JSON")


# ---------------------------------------------------------------------------------- train


class _Stop:
    """Stands for the progress bar; raises KeyboardInterrupt once training reached an epoch."""

    def __init__(self, at_epoch):
        self.at_epoch, self.names = at_epoch, []

    @contextmanager
    def __call__(self, enabled=True):
        yield self

    def add_task(self, description, total=None, **_):
        self.names.append(description)
        return len(self.names) - 1

    def update(self, task, *, completed=None, **_):
        if self.names[task].startswith("training") and completed == self.at_epoch:
            raise KeyboardInterrupt


def _same_numbers(written, oracle):
    """JSON numbers equal to the library's (NaN is written as null)."""
    assert written.keys() == oracle.keys()
    for key, value in oracle.items():
        if np.isnan(value):
            assert written[key] is None, key
        else:
            assert written[key] == pytest.approx(value, abs=1e-12), key


def _weights(folder):
    model = WatermarkPredictor.load(folder)
    return {k: v.clone() for k, v in model.net_.state_dict().items()}, model.history_


def test_train_resumes_after_an_interruption_to_the_same_model(synth_dir, tmp_path, run,
                                                               monkeypatch):  # fmt: skip
    data = synth_dir[0]
    args = ["watermark", "train", "--data", data, *TINY, "--max-epochs", "2", "--test-size",
            "0.5"]  # fmt: skip
    code, _, err = run(*args, "--out", tmp_path / "whole")
    assert code == 0, err
    with monkeypatch.context() as m:
        m.setattr(cli_wm, "progress", _Stop(at_epoch=1))
        code, _, err = run(*args, "--out", tmp_path / "cut")
    assert code == 130, err  # interrupted
    assert (tmp_path / "cut" / "_state" / "state.pt").is_file()
    assert not (tmp_path / "cut" / "training.json").exists()
    code, stdout, err = run(*args, "--out", tmp_path / "cut", "--json")
    assert code == 0, err
    assert "resuming the interrupted run" in err
    record = json.loads(stdout)
    assert record["resumed"] is True and record["n_train"] == 3 and record["n_test"] == 3
    assert not (tmp_path / "cut" / "_state").exists()
    whole, h_whole = _weights(tmp_path / "whole" / "model")
    cut, h_cut = _weights(tmp_path / "cut" / "model")
    assert whole.keys() == cut.keys()
    for key in whole:
        assert torch.equal(whole[key], cut[key]), key
    assert h_whole.loss == h_cut.loss
    assert record["history"]["loss"] == list(h_whole.loss)
    assert (tmp_path / "cut" / "training.png").stat().st_size > 0


def test_train_records_the_held_out_numbers_of_the_library(synth_dir, tmp_path, run):
    code, stdout, err = run("watermark", "train", "--data", synth_dir[0], *TINY, "--max-epochs",
                            "1", "--test-size", "0.5", "--seed", "2", "--out", tmp_path / "m",
                            "--level-readout", "level_head", "--json")  # fmt: skip
    assert code == 0, err
    record = json.loads(stdout)
    assert record["params"]["level_readout"] == "level_head"
    assert json.loads((tmp_path / "m" / "training.json").read_text()) == record
    ds = load_watermark_dataset(synth_dir[0])
    order = np.random.default_rng(2).permutation(len(ds))
    test, fit = ds.subset(np.sort(order[:3])), ds.subset(np.sort(order[3:]))
    model = WatermarkPredictor.load(tmp_path / "m" / "model")
    assert model.level_readout == "level_head"
    assert record["test_evaluation"] is not None  # the held-out half has two visible marks
    oracle = evaluate_predictions(model.predict(test.images), test, train=fit)
    _same_numbers(record["test_evaluation"]["visibility"], oracle.visibility)
    for name, numbers in oracle.controls.items():
        _same_numbers(record["test_evaluation"]["controls"][name], numbers)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--data", "no_such_folder"], "--data"),
        (["--n", "8", "--test-size", "1.0"], "--test-size"),
        (["--n", "8", "--widths", "4,8"], "--widths"),
        (["--n", "8", "--max-epochs", "0"], "--max-epochs"),
    ],
)
def test_train_bad_input_is_one_line_naming_the_option(args, option, run, tmp_path):
    code, _, err = run("watermark", "train", *args, "--kinds", "logo", "--out", tmp_path / "m")
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}:")


@pytest.mark.parametrize(
    "args",
    [
        ["--max-epochs", "0"],
        ["--batch-size", "0"],
        ["--learning-rate", "-1"],
        ["--level-readout", "argmax"],
    ],
)
def test_train_settings_are_checked_before_the_images_are_made(args, run, tmp_path, monkeypatch):
    """They were checked by fit, after the images were generated (minutes at the default n)."""

    def no_images(*args, **kwargs):
        raise AssertionError("images were generated before the settings were checked")

    monkeypatch.setattr(cli_wm, "_dataset", no_images)
    code, _, err = run("watermark", "train", *args, "--out", tmp_path / "m")
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {args[0]}:"), err


# ------------------------------------------------------------------------------- evaluate


def test_evaluate_writes_the_numbers_and_the_page(model_dir, tmp_path, run):
    out = tmp_path / "e"
    code, stdout, err = run("watermark", "evaluate", "--n", "8", "--seed", "4", "--kinds",
                            "logo,text,pattern", "--model", model_dir, "--out", out,
                            "--json")  # fmt: skip
    assert code == 0, err
    payload = json.loads(stdout)
    assert json.loads((out / "evaluation.json").read_text()) == payload
    # the clean fraction the images were made with (the training recipe's), not null
    assert payload["data"]["clean_fraction"] == TRAIN_DATA["clean_fraction"]
    ds = synthesize(8, random_state=4, kinds=("logo", "text", "pattern"),
                    clean_fraction=TRAIN_DATA["clean_fraction"])  # fmt: skip
    pred = WatermarkPredictor.load(model_dir).predict(ds.images)
    oracle = evaluate_predictions(pred, ds, random_state=4)
    _same_numbers(payload["predictor"]["visibility"], oracle.visibility)
    _same_numbers(payload["predictor"]["location"], oracle.location)
    d = payload["descriptions"]
    # the paragraph's last sentence carries the predicted level, the references the true one
    truth = np.asarray(ds.levels)
    expected = np.mean(np.asarray(pred.levels) == truth)
    assert d["predictor"]["accuracy_exact"] == pytest.approx(expected, abs=1e-12)
    assert d["ground truth, other wording"]["accuracy_exact"] == 1.0
    constant = d["constant 'no watermark'"]["accuracy_exact"]
    assert constant == pytest.approx(np.mean(truth == "invisible"), abs=1e-12)
    html = (out / "watermark_evaluation.html").read_text()
    for title in PAGE_TITLES:
        assert title in html
    assert (out / "watermark_predictor.png").stat().st_size > 0


def test_evaluate_needs_visible_marks(model_dir, tmp_path, run):
    # only invisible kinds: no --n gives a visible mark, so --kinds is named (it was --n, after
    # the images had been generated and predicted)
    code, _, err = run("watermark", "evaluate", "--n", "3", "--kinds", "dwtDctSvd", "--model",
                       model_dir, "--out", tmp_path / "e")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --kinds:")
    assert "generating" not in err
    # visible kinds, but too few images to hold two visible marks: --n
    code, _, err = run("watermark", "evaluate", "--n", "2", "--kinds", "logo,dwtDctSvd",
                       "--clean-fraction", "0.5", "--model", model_dir, "--out", tmp_path / "f")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --n:")


# --------------------------------------------------------------------------------- export


def test_export_writes_the_three_stages(synth_dir, tmp_path, run):
    out = tmp_path / "x"
    code, stdout, err = run("watermark", "export", "--data", synth_dir[0], "--out", out,
                            "--n-position", "3", "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(stdout)
    assert result["counts"] == {"WQA-Position": 3, "WQA-Synthetic": 6, "WQA-Real": 0}
    synthetic = json.loads((out / "WQA-Synthetic" / "train.json").read_text())
    levels = load_watermark_dataset(synth_dir[0]).levels
    for r, level in zip(synthetic, levels, strict=True):
        assert r["visibility"] == level
        assert r["conversations"][1]["value"].endswith(f"The watermark visibility is: {level}.")
        assert (out / "WQA-Synthetic" / "images" / r["image"]).is_file()
    assert (out / "WQA-Real" / "README.txt").is_file()
    code, _, err = run("watermark", "export", "--data", synth_dir[0], "--out", out)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out:")
    code, _, err = run("watermark", "export", "--data", synth_dir[0], "--out", tmp_path / "y",
                       "--format", "sharegpt")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --format:")


# ------------------------------------------------------------------------------ the pages


def _overlay_oracle(image, heat, alpha):
    """Pixel by pixel: (1 - a) * pixel + a * red with a = alpha * heat."""
    out = np.empty(image.shape, np.uint8)
    for y in range(image.shape[0]):
        for x in range(image.shape[1]):
            a = alpha * min(max(heat[y, x], 0.0), 1.0)
            for c, red in enumerate((255.0, 0.0, 0.0)):
                out[y, x, c] = int(np.rint((1 - a) * image[y, x, c] + a * red))
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.floats(0, 1), h=st.integers(1, 9),
       w=st.integers(1, 9))  # fmt: skip
def test_heatmap_overlay_blends_red_by_the_heatmap(seed, alpha, h, w):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    heat = rng.random((h, w))
    heat[rng.random((h, w)) < 0.3] = 0.0
    out = heatmap_overlay(image, heat, alpha=alpha)
    assert np.array_equal(out, _overlay_oracle(image, heat, alpha))
    assert np.array_equal(out[heat == 0], image[heat == 0])


def test_heatmap_overlay_outlines_the_box_only():
    image = np.zeros((10, 12, 3), np.uint8)
    out = heatmap_overlay(image, np.zeros((10, 12)), (2, 3, 8, 9))
    yellow = np.all(out == (255, 220, 0), axis=-1)
    ring = np.zeros((10, 12), bool)
    ring[3:9, 2:8] = True
    ring[5:7, 4:6] = False  # a 2-pixel frame around the 6 x 6 box
    assert np.array_equal(yellow, ring)
    assert np.array_equal(heatmap_overlay(image, np.zeros((10, 12)), (-1, -1, -1, -1)), image)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"image": np.zeros((4, 4), np.uint8)}, "image"),
        ({"heatmap": np.zeros((3, 4))}, "heatmap"),
        ({"alpha": 1.5}, "alpha"),
        ({"box": ("a", 0, 1, 1)}, "box"),
    ],
)
def test_heatmap_overlay_bad_input_names_the_argument(kwargs, name):
    args = {"image": np.zeros((4, 4, 3), np.uint8), "heatmap": np.zeros((4, 4))} | kwargs
    with pytest.raises(InputError, match=f"^{name}:"):
        heatmap_overlay(**args)


def test_page_builders_refuse_bad_input(model_dir):
    images = synthesize(2, random_state=1).images
    pred = WatermarkPredictor.load(model_dir).predict(images)
    with pytest.raises(InputError, match="^names:"):
        build_contact_sheet(pred, list(images), ["one"], ["a", "b"])
    with pytest.raises(InputError, match=r"^images\[1\]:"):
        build_contact_sheet(pred, [images[0], images[1][:100]], ["a", "b"], ["a", "b"])
    with pytest.raises(InputError, match="^predictions:"):
        build_contact_sheet(pred.to_dict(), list(images), ["a", "b"], ["a", "b"])
    with pytest.raises(InputError, match="^evaluation:"):
        build_evaluation_page(pred)
    page = build_contact_sheet(pred, list(images), ["a.png", "b.png"], ["x.", "y."])
    assert [s.title for s in page.sections] == ["All images", "a.png", "b.png"]


def test_contact_sheet_overview_says_how_the_level_and_views_were_read(model_dir):
    """It said 'the level follows from' the score and 'each image and its mirror image' for every
    model, also one whose level is the level head's and a prediction from one view."""
    images = synthesize(2, random_state=1).images
    model = WatermarkPredictor.load(model_dir)

    def overview(pred):
        page = build_contact_sheet(pred, list(images), ["a", "b"], ["x.", "y."])
        return " ".join(getattr(b, "text", "") for b in page.sections[0].blocks)

    text = overview(model.predict(images))
    assert "level follows from it" in text and "mirror image" in text
    text = overview(model.set_params(level_readout="level_head").predict(images))
    assert "level head's most probable level" in text and "level follows" not in text
    assert "mirror image" not in overview(model.predict(images, flip_average=False))


@pytest.mark.parametrize(("device", "says"), [("gpu", "expected"), ("cuda", "no GPU")])
def test_predict_device_is_checked_before_any_work(device, says, run, tmp_path, model_dir,
                                                   image_folder, monkeypatch):  # fmt: skip
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code, _, err = run("watermark", "predict", image_folder, "--model", model_dir, "--out",
                       tmp_path / "p", "--device", device)  # fmt: skip
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --device:") and says in err
    assert not (tmp_path / "p").exists()


def test_predict_device_auto_without_a_gpu_equals_the_cpu(run, tmp_path, model_dir,
                                                         image_folder, monkeypatch):  # fmt: skip
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    outs = {}
    for device in ("cpu", "auto"):
        out = tmp_path / device
        code, _, err = run("watermark", "predict", image_folder, "--model", model_dir, "--out",
                           out, "--device", device)  # fmt: skip
        assert code == 0, err
        outs[device] = json.loads((out / "predictions.json").read_text())
    assert outs["auto"] == outs["cpu"]
