"""``trustlab governance validate PATH`` named a bad PATH by its kind: a questionnaire as
"--questionnaire (q.yaml): ..." (an option not given; the shipped questionnaire was fine), a tiers
or answers file as "tiers (...)" or "answers (...)". They are all PATH now, and a bad
--questionnaire is still named as that option."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main


@pytest.mark.parametrize("kind", ["questionnaire", "tiers", "answers"])
def test_a_bad_file_to_validate_is_named_path(tmp_path, capsys, kind):
    path = tmp_path / f"{kind}.yaml"
    path.write_text(f"kind: participation-{kind}\n", encoding="utf-8")
    code, _, err = run_main(["governance", "validate", path], capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: PATH ({kind}.yaml): expected a file valid")
    code, _, err = run_main(["governance", "validate", path, "--questionnaire", path], capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: --questionnaire ({kind}.yaml): expected")
