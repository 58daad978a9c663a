"""Diff review 60 H: 'watermark synth --overwrite' removed the whole DIR/images folder, a user's
notes there too, where --overwrite's help says only the files the command writes are replaced or
removed (13487b19)."""

from cli_helpers import run_main


def test_synth_overwrite_removes_only_earlier_images(tmp_path, capsys):
    out = tmp_path / "d"
    (out / "images").mkdir(parents=True)
    (out / "images" / "00002.png").write_bytes(b"an earlier, larger run's")
    (out / "images" / "notes.txt").write_text("mine")
    (out / "images" / "cover.png").write_bytes(b"mine")
    code, _, err = run_main(["watermark", "synth", "--n", "2", "--out", out, "--overwrite"], capsys)
    assert code == 0, err
    kept = sorted(p.name for p in (out / "images").iterdir())
    assert kept == ["00000.png", "00001.png", "cover.png", "notes.txt"]
