"""Prompt files found in review: a saved prompt file whose ids repeat is refused by name (the
neutrality task needs one sample per id; it died with inspect's PrerequisiteError)."""

from __future__ import annotations

import json

import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import load_prompts, own_prompts


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_prompt_file_with_a_repeated_id_is_refused_naming_the_rows(tmp_path, suffix):
    saved = own_prompts().save(tmp_path / f"prompts{suffix}")
    lines = saved.read_text(encoding="utf-8").splitlines(keepends=True)
    first_row = 1 if suffix == ".csv" else 0  # below the header
    saved.write_text("".join(lines + [lines[first_row + 2]]), encoding="utf-8")
    with pytest.raises(InputError, match=r"^path: .*row 36 repeats the id of row 2\), got 2$"):
        load_prompts(saved)


def test_a_prompt_file_with_unique_ids_in_any_order_still_loads(tmp_path):
    saved = own_prompts().save(tmp_path / "prompts.jsonl")
    lines = saved.read_text(encoding="utf-8").splitlines(keepends=True)
    saved.write_text("".join(reversed(lines)), encoding="utf-8")
    loaded = load_prompts(saved)
    assert sorted(r["id"] for r in loaded.records) == list(range(36))


@pytest.mark.parametrize("column", ["id", "format_number", "input_num"])
@pytest.mark.parametrize("value", [-1, "-1", "²"])
def test_a_negative_or_non_decimal_integer_cell_is_refused_by_name(tmp_path, column, value):
    """A negative id reached the judge's example draw and errored a judged run ('variant:
    expected None or a non-negative integer'); "²" passed isdigit() and crashed int()."""
    records = [dict(r) | {"accepted": list(r["accepted"])} for r in own_prompts().records]
    records[3][column] = value
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(InputError, match=rf"^path: expected row 3: column {column}: a non-neg"):
        load_prompts(path)
