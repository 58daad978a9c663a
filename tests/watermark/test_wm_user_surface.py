"""``trustlab watermark`` with a user's own files: damaged dataset folders, phone photos (EXIF
orientation), large images on the contact sheet, an out-of-range --seed with --data."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import re

import numpy as np
import pytest

from cli_helpers import one_line, run_quiet

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from PIL import Image  # noqa: E402

from trustlab.audit.sections.watermark import write_contact_sheet  # noqa: E402
from trustlab.cli import watermark as cli_wm  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.watermark import load_watermark_dataset, synthesize  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wm_saved")
    synthesize(4, random_state=9, kinds=("logo", "text"), clean_fraction=0.0).save(folder)
    return folder


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def _truncate_arrays(d):
    data = (d / "arrays.npz").read_bytes()
    (d / "arrays.npz").write_bytes(data[:1000])


def _drop_marks(d):
    with np.load(d / "arrays.npz") as z:
        kept = {k: z[k] for k in z.files if k != "marks"}
    np.savez(d / "arrays.npz", **kept)


def _edit_annotations(change):
    def edit(d):
        meta = json.loads((d / "annotations.json").read_text())
        (d / "annotations.json").write_text(json.dumps(change(meta)))

    return edit


def _without_kind(meta):
    del meta["images"][1]["kind"]
    return meta


def _one_record_less(meta):
    del meta["images"][1]
    return meta


@pytest.mark.parametrize(
    "damage",
    [
        _truncate_arrays,
        _drop_marks,
        _edit_annotations(_without_kind),
        _edit_annotations(lambda meta: []),
        _edit_annotations(_one_record_less),
    ],
    ids=["truncated arrays", "no marks array", "record without kind", "a list", "record removed"],
)
def test_a_damaged_dataset_folder_is_refused_naming_the_folder(saved, tmp_path, damage):
    folder = _copy(saved, tmp_path / "data")
    damage(folder)
    with pytest.raises(InputError, match="path: expected a readable dataset folder"):
        load_watermark_dataset(folder)
    code, _, err = run_quiet("watermark", "export", "--data", folder, "--out", tmp_path / "x")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --data: expected a readable dataset folder")


def test_evaluate_refuses_a_negative_seed_with_data(saved, tmp_path):
    code, _, err = run_quiet(
        "watermark", "evaluate", "--data", saved, "--seed", "-1", "--out", tmp_path / "e"
    )
    assert code == 2
    assert one_line(err) == "trustlab: error: --seed: expected a non-negative integer seed, got -1"
    assert not (tmp_path / "e").exists()


def test_a_photo_is_read_upright_as_its_exif_orientation_says(tmp_path):
    stored = np.full((20, 40, 3), 200, np.uint8)
    stored[2:8, 3:12] = (10, 60, 110)  # a block in the stored top left
    im = Image.fromarray(stored)
    exif = im.getexif()
    exif[0x0112] = 6  # viewers turn it 90 degrees clockwise
    path = tmp_path / "phone.png"
    im.save(path, exif=exif.tobytes())
    read = cli_wm._read_image(path, "IMAGES")
    np.testing.assert_array_equal(read, np.rot90(stored, k=-1))  # clockwise: shown 20 wide
    plain = tmp_path / "plain.png"
    Image.fromarray(stored).save(plain)
    np.testing.assert_array_equal(cli_wm._read_image(plain, "IMAGES"), stored)


def _yellow_pixels(png_base64: str) -> int:
    rgb = np.asarray(Image.open(io.BytesIO(base64.b64decode(png_base64))).convert("RGB"))
    r, g, b = (rgb[..., k].astype(int) for k in range(3))
    return int(((r - b > 100) & (g - b > 80)).sum())


def test_the_contact_sheet_shows_the_box_of_a_large_image(tmp_path):
    from trustlab.watermark.checkpoints import load_checkpoint

    small = np.full((64, 64, 3), 128, np.uint8)
    pred = load_checkpoint().predict([small, small])
    side = 2048
    heatmaps = np.zeros_like(pred.heatmaps)  # no red: only the box is coloured
    pred = dataclasses.replace(
        pred,
        heatmaps=heatmaps,
        boxes=np.array([[400, 400, 1600, 1600], [50, 50, 200, 200]]),
        image_sizes=((side, side), (256, 256)),
    )
    grey = [np.full((side, side, 3), 128, np.uint8), np.full((256, 256, 3), 128, np.uint8)]
    html, _ = write_contact_sheet(pred, grey, ["large.png", "small.png"], ["", ""], tmp_path)
    cards = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html.read_text())
    assert len(cards) == 2
    large, reference = (_yellow_pixels(c) for c in cards)
    assert reference > 100  # a 256-pixel image's box is plainly drawn
    assert large > reference / 2  # and a 2048-pixel image's box as plainly


@pytest.mark.parametrize(
    "option, value", [("--kinds", "logo"), ("--clean-fraction", "0.5")], ids=["kinds", "clean"]
)
@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_options_of_generated_images_are_refused_with_data(saved, tmp_path, command, option,
                                                           value):  # fmt: skip
    out = tmp_path / "out"
    code, _, err = run_quiet("watermark", command, "--data", saved, option, value, "--out", out)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}: expected no {option} with --data")
    assert not out.exists()


def test_evaluate_overwrite_drops_the_other_modes_page_and_figure(saved, tmp_path):
    pytest.importorskip("transformers")
    from test_vlm_backend import build_tiny_llava

    build_tiny_llava(tmp_path / "vlm")
    out = tmp_path / "e"
    assert run_quiet("watermark", "evaluate", "--data", saved, "--out", out)[0] == 0
    predictor_files = {"watermark_evaluation.html", "watermark_evaluation.json",
                       "watermark_predictor.png"}  # fmt: skip
    assert predictor_files <= {p.name for p in out.iterdir()}
    args = ("--data", saved, "--vlm", tmp_path / "vlm", "--out", out, "--overwrite")
    assert run_quiet("watermark", "evaluate", *args)[0] == 0
    assert {p.name for p in out.iterdir()} == {"evaluation.json", "watermark_backend.png"}
    assert "backend" in json.loads((out / "evaluation.json").read_text())
    assert run_quiet("watermark", "evaluate", "--data", saved, "--out", out, "--overwrite")[0] == 0
    assert {p.name for p in out.iterdir()} == {"evaluation.json", *predictor_files}


def test_export_overwrite_with_fewer_images_leaves_no_earlier_images(saved, tmp_path):
    out = tmp_path / "x"
    assert run_quiet("watermark", "export", "--data", saved, "--out", out)[0] == 0
    smaller = tmp_path / "smaller"
    synthesize(2, random_state=4, kinds=("logo",), clean_fraction=0.0).save(smaller)
    (out / "WQA-Real" / "images" / "mine.png").write_bytes(b"the user's own real image")
    assert run_quiet("watermark", "export", "--data", smaller, "--out", out, "--overwrite")[0] == 0
    for stage in ("WQA-Position", "WQA-Synthetic"):
        listed = {r["image"] for r in json.loads((out / stage / "train.json").read_text())}
        assert {p.name for p in (out / stage / "images").iterdir()} == listed
        assert len(listed) == 2
    assert (out / "WQA-Real" / "images" / "mine.png").exists()
