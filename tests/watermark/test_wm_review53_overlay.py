"""``trustlab watermark predict`` (review 5): heatmap overlays were written at each image's full
size (a 24-megapixel photo gave a 44 MB PNG, a 95-megapixel one took minutes); they are now scaled
down, keeping the aspect ratio, to at most ``--overlay-size`` pixels on the longer side (2048 by
default; 0 keeps the full size), and the box is scaled with the image."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_quiet, with_options
from wm_tiny_model import tiny_predictor

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from PIL import Image  # noqa: E402


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """A 2400 x 900 photo-like image, the tiny model, and its predictions at full overlay size."""
    root = tmp_path_factory.mktemp("wm53")
    model = tiny_predictor(root / "model", 6, 4)
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:900, 0:2400]
    img = np.stack([(x / 10) % 256, (y / 4) % 256, (x + y) / 13 % 256], -1)
    img = np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)
    img[300:420, 1500:2100] = 255  # a bright band for the heatmap to find
    Image.fromarray(img).save(root / "wide.png")
    base = ["watermark", "predict", root / "wide.png", "--model", model]
    code, _, err = run_quiet(*with_options(base, ["--out", root / "full", "--overlay-size", "0"]))
    assert code == 0, err
    return root, base, model


def test_overlay_is_bounded_keeping_the_aspect_ratio(wide, tmp_path):
    root, base, _ = wide
    out = tmp_path / "p"
    code, _, err = run_quiet(*with_options(base, ["--out", out, "--overlay-size", "600"]))
    assert code == 0, err
    small = np.asarray(Image.open(out / "heatmaps" / "wide.png"))
    assert small.shape == (225, 600, 3)  # 900 x 2400 scaled by 1/4
    full = np.asarray(Image.open(root / "full" / "heatmaps" / "wide.png"))
    assert full.shape == (900, 2400, 3)
    # the same picture: the full-size overlay scaled down by Pillow differs by a few levels
    # (resampling; the 2-pixel box outline is drawn at each size)
    scaled = np.asarray(Image.fromarray(full).resize((600, 225), Image.Resampling.BOX))
    assert np.mean(np.abs(scaled.astype(float) - small)) < 6.0
    rec = json.loads((out / "wide.json").read_text())
    assert rec == json.loads((root / "full" / "wide.json").read_text())  # box in image pixels
    assert json.loads((out / "predictions.json").read_text())["overlay_size"] == 600
    if rec["box"] is not None:  # the outline is drawn at the scaled box
        x0, y0, x1, y1 = (int(v / 4) for v in rec["box"])
        assert tuple(small[y0, x0 + 1]) == (255, 220, 0)


def test_default_overlay_size_is_2048_and_small_images_keep_their_size(wide, tmp_path):
    root, base, model = wide
    out = tmp_path / "p"
    code, _, err = run_quiet(*with_options(base, ["--out", out]))
    assert code == 0, err
    assert np.asarray(Image.open(out / "heatmaps" / "wide.png")).shape == (768, 2048, 3)
    Image.fromarray(np.full((100, 300, 3), 90, np.uint8)).save(tmp_path / "small.png")
    args = [
        "watermark",
        "predict",
        tmp_path / "small.png",
        "--model",
        model,
        "--out",
        tmp_path / "s",
    ]
    code, _, err = run_quiet(*args)
    assert code == 0, err
    assert np.asarray(Image.open(tmp_path / "s" / "heatmaps" / "small.png")).shape == (100, 300, 3)


@pytest.mark.parametrize("value", ["-1", "5"])
def test_overlay_size_refused_by_name(wide, tmp_path, value):
    _, base, _ = wide
    code, _, err = run_quiet(
        *with_options(base, ["--out", tmp_path / "p", "--overlay-size", value])
    )
    assert code == 2
    assert "--overlay-size" in one_line(err)
    assert not (tmp_path / "p").exists()
