"""Diff review 60 H: 'trustlab watermark export' into a folder holding only a user's real
WQA-Real/train.json refused it as 'already holds an export (WQA-Real/train.json); pass
--overwrite to replace it', though the export keeps that file (--overwrite too)."""

import json

from cli_helpers import one_line, run_main
from trustlab.watermark.synth import synthesize


def test_export_next_to_a_users_real_stage_keeps_it_without_overwrite(tmp_path, capsys):
    data, out = tmp_path / "d", tmp_path / "x"
    synthesize(2, random_state=2).save(data)
    real = out / "WQA-Real" / "train.json"
    real.parent.mkdir(parents=True)
    mine = '[{"image": "r.png", "id": "r", "conversations": []}]'
    real.write_text(mine)
    argv = ["watermark", "export", "--data", str(data), "--out", str(out), "--n-position", "1"]
    code, stdout, err = run_main(argv, capsys)
    assert code == 0, err
    assert real.read_text() == mine
    assert "WQA-Real 1" in stdout
    assert (
        f"wrote WQA-Position, WQA-Synthetic to {out} (kept the WQA-Real/train.json there)" in stdout
    )
    # an earlier export (its WQA-Position and WQA-Synthetic) is still refused without --overwrite
    code, _, err = run_main(argv, capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: --out: {out} already holds an export")
    code, stdout, _ = run_main([*argv, "--overwrite", "--json"], capsys)
    assert code == 0 and json.loads(stdout)["counts"]["WQA-Real"] == 1
