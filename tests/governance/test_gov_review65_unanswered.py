"""Review 65: an answers file whose every rung is null (the blank file with the assessor's name
filled in) was scored as 'no rung credited' on every dimension, in the summary and the report's
profile, the words the docs keep for an answer whose evidence is incomplete, and the CLI said so
with exit 0. Now such a dimension reads 'not answered' and the summary says nothing was
assessed; an answered dimension credited nothing still reads 'no rung credited'."""

from __future__ import annotations

from trustlab.governance import assess, markdown_report

_HEAD = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    "assessor: {name: a, perspective: self}\nanswers:\n"
)


def _assess(tmp_path, answers):
    path = tmp_path / "a.yaml"
    path.write_text(_HEAD + answers, encoding="utf-8")
    return assess(path)


def _profile_row(result, title):
    return next(r for r in markdown_report(result).splitlines() if r.startswith(f"| {title} |"))


def test_all_null_rungs_read_not_answered(tmp_path):
    result = _assess(tmp_path, "  data.planning: {rung: null}\n  design.building: {rung: null}\n")
    text = result.summary()
    assert "no item answered (every rung null): nothing assessed" in text
    assert "Data collection and ownership: not answered" in text
    assert "no rung credited" not in text
    assert _profile_row(result, "Data collection and ownership").endswith("| not answered |")


def test_answered_without_evidence_is_still_no_rung_credited(tmp_path):
    result = _assess(tmp_path, "  data.planning: {rung: 4}\n")
    text = result.summary()
    assert "Data collection and ownership: no rung credited" in text
    assert "Design and training: not answered" in text
    assert "nothing assessed" not in text
    assert _profile_row(result, "Data collection and ownership").endswith("| no rung credited |")
