"""``trustlab watermark predict`` (review 4): an unreadable image found in a folder (a corrupt file,
a broken link, one under 8 pixels a side) is skipped with a warning and a count, and the other
images get their outputs, the same as without it (one corrupt file late in a folder failed the
whole run after every image before it was predicted); a file named on the command line is still
refused; a folder with nothing readable is one line naming the file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_quiet
from wm_tiny_model import tiny_predictor

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from PIL import Image  # noqa: E402

from trustlab.cli import watermark as cli_wm  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_predictor(tmp_path_factory.mktemp("wm4") / "model", 6, 4)


def _good_images(folder, n=5):
    folder.mkdir(parents=True)
    rng = np.random.default_rng(2)
    for k in range(n):
        h, w = rng.integers(40, 90, 2)
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(img).save(folder / f"{k:02d}.png")


def test_unreadable_images_in_a_folder_are_skipped_with_a_warning(tmp_path, model_dir,
                                                                  monkeypatch):  # fmt: skip
    monkeypatch.setattr(cli_wm, "PREDICT_CHUNK", 2, raising=False)  # chunks across the bad ones
    _good_images(tmp_path / "good")
    code, _, err = run_quiet("watermark", "predict", tmp_path / "good", "--model", model_dir,
                             "--out", tmp_path / "p_good")  # fmt: skip
    assert code == 0, err

    mixed = tmp_path / "mixed"
    _good_images(mixed)
    (mixed / "01b.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")  # between good ones
    (mixed / "zz_late.jpg").write_bytes(b"not a jpeg")  # the last file of the folder
    (mixed / "02b.png").symlink_to(tmp_path / "gone.png")  # a broken link
    Image.new("RGB", (4, 4)).save(mixed / "03b.png")  # too small
    (mixed / "notes.txt").write_text("not an image")  # not an image file: not counted
    code, stdout, err = run_quiet("watermark", "predict", mixed, "--model", model_dir,
                                  "--out", tmp_path / "p_mixed", "--json")  # fmt: skip
    assert code == 0, err
    lines = [line for line in err.splitlines() if "trustlab: warning" in line]
    assert len(lines) == 1, err
    warning = lines[0]
    assert warning.startswith("trustlab: warning: skipped 4 of 9 images")
    for name in ("01b.png", "02b.png", "03b.png", "zz_late.jpg"):
        assert name in warning

    payload = json.loads(stdout)
    assert payload == json.loads((tmp_path / "p_mixed" / "predictions.json").read_text())
    assert payload["n_images"] == 5
    assert [s["image"] for s in payload["skipped"]] == [
        str(mixed / n) for n in ("01b.png", "02b.png", "03b.png", "zz_late.jpg")
    ]
    assert all(s["reason"].startswith("IMAGES: expected") for s in payload["skipped"])
    good = json.loads((tmp_path / "p_good" / "predictions.json").read_text())
    assert good["skipped"] == []
    strip = ("image",)  # the folder differs, nothing else
    assert [{k: v for k, v in r.items() if k not in strip} for r in payload["images"]] == [
        {k: v for k, v in r.items() if k not in strip} for r in good["images"]
    ]
    assert payload["summary"] == good["summary"]
    written = sorted(p.name for p in (tmp_path / "p_mixed" / "heatmaps").iterdir())
    assert written == [f"{k:02d}.png" for k in range(5)]
    assert not (tmp_path / "p_mixed" / "zz_late.json").exists()
    for k in range(5):
        assert (tmp_path / "p_mixed" / "heatmaps" / f"{k:02d}.png").read_bytes() == (
            tmp_path / "p_good" / "heatmaps" / f"{k:02d}.png"
        ).read_bytes()


def test_a_named_unreadable_file_is_still_refused(tmp_path, model_dir):
    _good_images(tmp_path / "good", n=2)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    code, _, err = run_quiet("watermark", "predict", tmp_path / "good", tmp_path / "broken.png",
                             "--model", model_dir, "--out", tmp_path / "p")  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: IMAGES:") and str(tmp_path / "broken.png") in line
    assert not (tmp_path / "p" / "predictions.json").exists()


def test_a_folder_with_nothing_readable_is_one_line_naming_a_file(tmp_path, model_dir):
    folder = tmp_path / "bad"
    folder.mkdir()
    deep = "a_rather_long_file_name_that_a_shortened_message_would_cut_off_before_its_end"
    for name in (f"{deep}.png", "b.jpg"):
        (folder / name).write_bytes(b"not an image")
    code, _, err = run_quiet("watermark", "predict", folder, "--model", model_dir,
                             "--out", tmp_path / "p")  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: IMAGES: expected at least one readable image")
    assert str(folder / f"{deep}.png") in line
    assert not (tmp_path / "p").exists()


def test_the_contact_sheet_says_what_it_left_out(tmp_path, model_dir):
    folder = tmp_path / "mixed"
    _good_images(folder, n=2)
    (folder / "zz.png").write_bytes(b"not a png")
    code, _, err = run_quiet("watermark", "predict", folder, "--model", model_dir,
                             "--out", tmp_path / "p")  # fmt: skip
    assert code == 0, err
    sheet = json.loads((tmp_path / "p" / "contact_sheet.json").read_text())
    assert sheet["meta"]["images"] == 2
    assert sheet["meta"]["skipped (unreadable)"] == "1: zz.png"
    assert "zz.png" in (tmp_path / "p" / "contact_sheet.html").read_text()


def test_a_large_image_is_read_without_pillows_bomb_warning(tmp_path, monkeypatch):
    import warnings

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # a stand-in for 89 megapixels
    rgb = np.random.default_rng(0).integers(0, 256, (40, 40, 3), dtype=np.uint8)  # 1,600 pixels
    Image.fromarray(rgb).save(tmp_path / "large.png")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = cli_wm._read_image(tmp_path / "large.png", "IMAGES")
    assert np.array_equal(got, rgb)
    assert [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)] == []
    Image.fromarray(np.zeros((50, 50, 3), np.uint8)).save(tmp_path / "bomb.png")  # over 2x
    with pytest.raises(cli_wm.InputError, match="bomb.png"):
        cli_wm._read_image(tmp_path / "bomb.png", "IMAGES")


def test_cards_of_files_sharing_a_name_say_which_file(tmp_path, model_dir):
    _good_images(tmp_path / "a", n=2)
    _good_images(tmp_path / "b", n=1)  # b/00.png shares a/00.png's name
    code, _, err = run_quiet("watermark", "predict", tmp_path / "a", tmp_path / "b",
                             "--model", model_dir, "--out", tmp_path / "p")  # fmt: skip
    assert code == 0, err
    sheet = json.loads((tmp_path / "p" / "contact_sheet.json").read_text())
    shown = [row["image"] for row in sheet["sections"][0]["data"]["images"]]
    assert shown == [str(tmp_path / "a" / "00.png"), "01.png", str(tmp_path / "b" / "00.png")]
    titles = [s["title"] for s in sheet["sections"][1:]]
    assert titles == shown
    names = [r["name"] for r in json.loads((tmp_path / "p" / "predictions.json").read_text())[
        "images"]]  # fmt: skip
    assert names == ["00", "01", "00_2"]


def test_a_folder_of_subfolders_is_refused_saying_they_are_not_searched(tmp_path, model_dir):
    _good_images(tmp_path / "photos" / "2024", n=1)  # a camera's layout: images one level down
    (tmp_path / "photos" / "2025").mkdir()
    code, _, err = run_quiet("watermark", "predict", tmp_path / "photos", "--model", model_dir,
                             "--out", tmp_path / "p")  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: IMAGES: expected folders holding PNG or JPEG files")
    assert "2 subfolders: subfolders are not searched" in line
