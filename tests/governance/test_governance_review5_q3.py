"""Review 5 (fix pass) of the participation assessment: two answers files from one assessor
(names equal up to spaces and case) are refused naming both files; ``file:`` evidence is shown
as an absolute path in the report, so it opens from the --out folder; a dimension with no rung
credited says the first tier is reached from nothing, not "rung to reach: 1 manipulation"."""

from __future__ import annotations

import pytest

from cli_helpers import run_main

HEAD = "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: S\n"


def _write(path, name: str, answers: str) -> None:
    path.write_text(
        HEAD + f'assessor: {{name: "{name}", perspective: self}}\nanswers:\n{answers}',
        encoding="utf-8",
    )


ONE = "  data.planning:\n    rung: 2\n    evidence: {assessor_statement: seen}\n"


@pytest.mark.parametrize("second", ["A", "a ", " A", "a"])
def test_two_files_from_one_assessor_are_refused_naming_both(tmp_path, capsys, second):
    from trustlab.errors import InputError
    from trustlab.governance import assess

    first_path, second_path = tmp_path / "first.yaml", tmp_path / "second.yaml"
    _write(first_path, "A", ONE)
    _write(second_path, second, ONE)
    with pytest.raises(InputError, match="^answers: expected one answers file per assessor") as e:
        assess([first_path, second_path])
    assert str(first_path) in str(e.value) and str(second_path) in str(e.value)
    code, _, err = run_main(["governance", "assess", str(first_path), str(second_path)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "second.yaml" in err


def test_file_evidence_is_shown_absolute_and_opens_from_the_out_folder(tmp_path, capsys):
    import os

    answers_dir, out = tmp_path / "answers", tmp_path / "elsewhere" / "out"
    (answers_dir / "ev").mkdir(parents=True)
    (answers_dir / "ev" / "minutes.txt").write_text("x", encoding="utf-8")
    path = answers_dir / "a.yaml"
    _write(
        path,
        "A",
        "  data.planning:\n    rung: 2\n    evidence: {assessor_statement: file:ev/minutes.txt}\n",
    )
    code, _, err = run_main(["governance", "assess", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    target = os.path.abspath(answers_dir / "ev" / "minutes.txt")
    for page in ("participation.md", "participation.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert f"file:{target}" in text, page
        assert "file:ev/minutes.txt" not in text, page


def test_a_dimension_without_a_credited_rung_reads_right_in_the_next_tier_table(tmp_path):
    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    _write(path, "A", ONE)  # data credited rung 2; every other dimension has none
    text = markdown_report(assess(path))
    rows = [line for line in text.splitlines() if line.startswith("| Design and training |")]
    step = rows[-1]  # the "Moving up a tier" table comes after the profile
    assert "the first tier starts at rung 1 manipulation" in step
    assert "no rung credited yet" in step and "| 1 manipulation |" not in step
    data = [line for line in text.splitlines() if line.startswith("| Data collection")][-1]
    assert "| 3 informing |" in data and "first tier" not in data
