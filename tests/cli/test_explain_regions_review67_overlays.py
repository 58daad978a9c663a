"""Review 67 of ``explain regions predict --out DIR`` over earlier overlays.

Measured on the old file (a tiny model trained with ``explain regions train``): with
DIR/overlays holding overlay_0099.png (and notes.txt) but no predictions.json or regions.png in
DIR, ``predict --out DIR`` without --overwrite exited 0 and had deleted overlay_0099.png (every
overlay_*.png is removed before the new ones are written). Now such a DIR is refused before any
work, like one holding predictions.json, naming --out; --overwrite goes on, and an overlays
folder without overlay_*.png is not refused. (The refusal comes before the model is read, so a
missing model shows which check was reached.)"""

from __future__ import annotations

from cli_helpers import one_line


def _predict(run, tmp_path, out, *extra):
    return run("explain", "regions", "predict", "--model", tmp_path / "no-model", "--out", out,
               *extra)  # fmt: skip


def test_earlier_overlays_are_refused_without_overwrite(run, tmp_path):
    out = tmp_path / "p"
    (out / "overlays").mkdir(parents=True)
    (out / "overlays" / "overlay_0099.png").write_bytes(b"mine")
    code, _, err = _predict(run, tmp_path, out)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --out:") and "already holds overlays" in line, err
    assert (out / "overlays" / "overlay_0099.png").read_bytes() == b"mine"


def test_overwrite_or_no_overlay_goes_on_to_the_model(run, tmp_path):
    out = tmp_path / "p"
    (out / "overlays").mkdir(parents=True)
    (out / "overlays" / "notes.txt").write_text("mine")
    for extra in ((), ("--overwrite",)):
        code, _, err = _predict(run, tmp_path, out, *extra)
        assert code == 2 and "overlays" not in one_line(err) and "--model" in one_line(err), err
    (out / "overlays" / "overlay_0000.png").write_bytes(b"old")
    code, _, err = _predict(run, tmp_path, out, "--overwrite")
    assert code == 2 and "already holds" not in err, err
