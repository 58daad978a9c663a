"""Review 65: load_paired_prompts accepted a row whose prompt_b is its prompt_a (measured: rows
0-1 of the shipped CSV with row 1's prompt_b set to its prompt_a loaded as 2 pairs), so one
prompt was graded against itself, even-handed and symmetric by construction. Now refused naming
the row; prompts that differ load as before."""

from __future__ import annotations

import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import load_paired_prompts
from trustlab.safety.neutrality.paired import PAIRED_FILE


@pytest.mark.parametrize("spacing", ["", "  ", "\n"])
def test_a_pair_of_one_prompt_is_refused_naming_the_row(tmp_path, spacing):
    frame = pd.read_csv(PAIRED_FILE).head(2)
    frame.loc[1, "prompt_b"] = frame.loc[1, "prompt_a"].replace(" ", " " + spacing, 1)
    frame.to_csv(tmp_path / "same.csv", index=False)
    with pytest.raises(InputError, match=r"^path: expected two different prompts per pair "
                       r"\(row 1: prompt_b is prompt_a\), got "):  # fmt: skip
        load_paired_prompts(tmp_path / "same.csv")
    frame.loc[1, "prompt_b"] = frame.loc[1, "prompt_a"] + " Please."
    frame.to_csv(tmp_path / "other.csv", index=False)
    assert len(load_paired_prompts(tmp_path / "other.csv")) == 2
