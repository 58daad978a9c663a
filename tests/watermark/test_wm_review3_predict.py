"""``trustlab watermark predict`` (review 3): transparent images are composited over white (the
alpha was dropped and the colour under transparent pixels read), and a folder is read, predicted
and let go of a chunk at a time (every image was held decoded at full size until the end)."""

from __future__ import annotations

import json
import weakref

import numpy as np
import pytest

from cli_helpers import run_quiet
from wm_tiny_model import tiny_predictor

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from PIL import Image  # noqa: E402

from trustlab.cli import watermark as cli_wm  # noqa: E402
from trustlab.watermark import WatermarkPredictor, synthesize  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_predictor(tmp_path_factory.mktemp("wm3") / "model", 6, 3)


def _white_over(rgb: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    a = alpha.astype(np.float64)[..., None] / 255.0
    return rgb.astype(np.float64) * a + 255.0 * (1.0 - a)


def test_rgba_la_and_palette_transparency_are_composited_over_white(tmp_path):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (24, 20, 3), dtype=np.uint8)
    alpha = rng.integers(0, 256, (24, 20), dtype=np.uint8)
    alpha[:4] = 0  # fully transparent rows: white, whatever colour lies under them
    Image.fromarray(np.dstack([rgb, alpha]), "RGBA").save(tmp_path / "rgba.png")
    got = cli_wm._read_image(tmp_path / "rgba.png", "IMAGES")
    assert np.abs(got - _white_over(rgb, alpha)).max() <= 1
    assert (got[:4] == 255).all()

    gray = rng.integers(0, 256, (24, 20), dtype=np.uint8)
    Image.fromarray(np.dstack([gray, alpha]), "LA").save(tmp_path / "la.png")
    got = cli_wm._read_image(tmp_path / "la.png", "IMAGES")
    assert np.abs(got - _white_over(np.dstack([gray] * 3), alpha)).max() <= 1

    pal = Image.fromarray(np.where(np.arange(20) < 10, 0, 200).astype(np.uint8)[None].repeat(24, 0))
    pal = pal.convert("P")
    pal.info["transparency"] = pal.getpixel((0, 0))  # the dark half is transparent
    pal.save(tmp_path / "pal.png", transparency=pal.getpixel((0, 0)))
    got = cli_wm._read_image(tmp_path / "pal.png", "IMAGES")
    assert (got[:, :10] == 255).all() and (got[:, 10:] == 200).all()

    Image.fromarray(rgb).save(tmp_path / "rgb.png")  # an opaque image is read as it is
    assert np.array_equal(cli_wm._read_image(tmp_path / "rgb.png", "IMAGES"), rgb)


def _outputs(out):
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    return {str(p): (out / p).read_bytes() for p in files if p.suffix != ".html"}


def test_predict_holds_a_chunk_of_images_not_the_folder(tmp_path, model_dir, monkeypatch):
    folder = tmp_path / "photos"
    folder.mkdir()
    rng = np.random.default_rng(1)
    for k in range(11):  # a stand-in for a large folder: the count alive is what is bounded
        h, w = rng.integers(40, 90, 2)
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(folder / f"{k}.png")
    read = cli_wm._read_image
    alive: set[int] = set()
    peak = [0]

    def counted(path, option):
        arr = read(path, option)
        key = id(arr)
        alive.add(key)
        weakref.finalize(arr, alive.discard, key)
        peak[0] = max(peak[0], len(alive))
        return arr

    monkeypatch.setattr(cli_wm, "_read_image", counted)
    monkeypatch.setattr(cli_wm, "PREDICT_CHUNK", 4, raising=False)
    code, _, err = run_quiet("watermark", "predict", folder, "--model", model_dir,
                             "--out", tmp_path / "chunked")  # fmt: skip
    # chunks of 4, batches of 2 (the CPU's): the network sees the same batches as in one pass
    assert code == 0, err
    assert peak[0] <= 4 + 1  # one chunk, and one image re-read for its overlay or card

    monkeypatch.setattr(cli_wm, "PREDICT_CHUNK", 100, raising=False)  # all in one chunk
    code, _, err = run_quiet("watermark", "predict", folder, "--model", model_dir,
                             "--out", tmp_path / "whole")  # fmt: skip
    assert code == 0, err
    chunked, whole = _outputs(tmp_path / "chunked"), _outputs(tmp_path / "whole")
    assert chunked.keys() == whole.keys() and len(chunked) == 2 * 11 + 2
    for name in chunked:
        if name.endswith(".json"):
            a, b = json.loads(chunked[name]), json.loads(whole[name])
            if name == "contact_sheet.json":  # its header has the time it was written
                a, b = a["sections"], b["sections"]
            assert a == b, name
        else:
            assert chunked[name] == whole[name], name
    oracle = WatermarkPredictor.load(model_dir).predict(
        [read(f, "IMAGES") for f in sorted(folder.iterdir())]
    )
    payload = json.loads(whole["predictions.json"])
    assert [r["score"] for r in payload["images"]] == [float(s) for s in oracle.scores]


def test_describe_predictions_is_answer_batch_on_predictions_already_made(model_dir):
    from trustlab.errors import InputError
    from trustlab.watermark.backends import TemplateBackend

    images = list(synthesize(3, random_state=4).images)
    model = WatermarkPredictor.load(model_dir)
    backend = TemplateBackend(model, random_state=7)
    questions = ["Where is the watermark?", "Describe it.", "Where is the watermark?"]
    made = backend.describe_predictions(model.predict(images), questions)
    assert made == backend.answer_batch(images, questions)
    with pytest.raises(InputError, match="questions"):
        backend.describe_predictions(model.predict(images), questions[:2])
