"""Prompt files found in review: a saved prompt file whose ids repeat is refused by name (the
neutrality task needs one sample per id; it died with inspect's PrerequisiteError)."""

from __future__ import annotations

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
