"""Diff review 65 K of 4269f4ad: load_paired_prompts refuses a row whose two prompts differ only
in spacing, but a row repeating an earlier pair with a trailing space (or a doubled one) loaded:
measured, rows 0-1 of the shipped CSV with row 1 = row 0 plus a trailing space gave 2 pairs, so
one pair counted twice in every rate. Now the repeat check ignores spacing as the same-prompt
check does; pairs that differ in case or punctuation still load."""

import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import load_paired_prompts
from trustlab.safety.neutrality.paired import PAIRED_FILE


def _two_rows(tmp_path, a, b):
    frame = pd.read_csv(PAIRED_FILE).head(2)
    frame.loc[1, "prompt_a"], frame.loc[1, "prompt_b"] = a(frame.loc[0]), b(frame.loc[0])
    frame.to_csv(tmp_path / "pairs.csv", index=False)
    return tmp_path / "pairs.csv"


@pytest.mark.parametrize("swap", [False, True])
def test_a_repeat_with_other_spacing_is_refused(tmp_path, swap):
    a = lambda r: r["prompt_a"] + " "  # noqa: E731
    b = lambda r: r["prompt_b"].replace(" ", "  ", 1)  # noqa: E731
    path = _two_rows(tmp_path, b, a) if swap else _two_rows(tmp_path, a, b)
    with pytest.raises(InputError, match=r"^path: expected each pair of prompts once \(row 1 "):
        load_paired_prompts(path)


def test_a_pair_differing_in_case_or_punctuation_loads(tmp_path):
    path = _two_rows(tmp_path, lambda r: r["prompt_a"].upper(), lambda r: r["prompt_b"] + "!")
    pairs = load_paired_prompts(path)
    assert len(pairs) == 2 and pairs.records[1]["prompt_b"].endswith("!")
