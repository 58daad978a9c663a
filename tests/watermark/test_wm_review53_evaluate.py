"""Review 5: ``trustlab watermark evaluate --clean-fraction 1`` generated and predicted every image,
then blamed --n ('expected at least two images with visible marks, got 0'), which no --n could
satisfy; it is now refused naming --clean-fraction before any work."""

from __future__ import annotations

from cli_helpers import one_line, run_quiet


def test_evaluate_with_every_image_clean_names_clean_fraction(tmp_path):
    out = tmp_path / "e"
    code, _, err = run_quiet("watermark", "evaluate", "--n", "4", "--seed", "3",
                             "--clean-fraction", "1", "--out", out)  # fmt: skip
    assert code == 2
    line = one_line(err)
    assert "--clean-fraction" in line and "--n" not in line
    assert "generating" not in err  # refused before any image was made
    assert not out.exists()
