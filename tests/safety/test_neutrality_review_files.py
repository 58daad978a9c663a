"""Prompt files found in review: a saved prompt file whose ids repeat, or with a negative id, is
refused by name (the neutrality task needs one sample per id, and a judged run needs ids >= 0);
a paired file with a BOM loads, one with a blank cell is refused by row and column."""

from __future__ import annotations

import json

import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import load_paired_prompts, load_prompts, own_prompts


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


def _paired_frame():
    import pandas as pd

    from trustlab.safety.neutrality.paired import PAIRED_FILE

    return pd.read_csv(PAIRED_FILE).drop(columns=["split"]).head(4)


def test_a_paired_file_saved_with_a_bom_loads_as_without(tmp_path):
    """A UTF-8 file with a BOM (Excel's 'CSV UTF-8') was refused as 'without main_category'."""
    frame = _paired_frame()
    frame.to_csv(tmp_path / "plain.csv", index=False)
    frame.to_csv(tmp_path / "bom.csv", index=False, encoding="utf-8-sig")
    plain, bom = (load_paired_prompts(tmp_path / name) for name in ("plain.csv", "bom.csv"))
    assert bom.records == plain.records and len(bom) == 4


@pytest.mark.parametrize("column", ["prompt_b", "stance_a"])
def test_a_blank_cell_of_a_paired_file_is_refused_naming_row_and_column(tmp_path, column):
    """A blank prompt was accepted (the model was asked an empty prompt)."""
    frame = _paired_frame()
    frame.loc[2, column] = "  "
    frame.to_csv(tmp_path / "blank.csv", index=False)
    with pytest.raises(InputError, match=rf"^path: expected a value in every column \(row 2: none "
                       rf"in {column}\), got "):  # fmt: skip
        load_paired_prompts(tmp_path / "blank.csv")


def test_a_jsonl_prompt_file_with_a_bom_loads_as_without(tmp_path):
    """A BOM was refused as 'Unexpected UTF-8 BOM' on line 1 (a CSV with one loaded)."""
    saved = own_prompts().save(tmp_path / "prompts.jsonl")
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + saved.read_bytes().replace(b"\n", b"\r\n"))
    assert load_prompts(bom).records == load_prompts(saved).records
