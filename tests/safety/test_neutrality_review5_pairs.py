"""load_paired_prompts refuses a paired file that repeats a pair of prompts (it loaded, and both
copies counted in every rate), naming the rows, in Python and as one line through the CLI."""

from __future__ import annotations

import pandas as pd
import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.safety.neutrality import load_paired_prompts
from trustlab.safety.neutrality.paired import PAIRED_FILE


def _frame(n: int = 2) -> pd.DataFrame:
    return pd.read_csv(PAIRED_FILE).head(n)


def test_rows_written_twice_are_refused_naming_the_rows(tmp_path):
    frame = _frame()
    pd.concat([frame, frame]).to_csv(tmp_path / "dup.csv", index=False)
    with pytest.raises(InputError, match=r"^path: expected each pair of prompts once \(row 2 "
                       r"repeats row 0\), got "):  # fmt: skip
        load_paired_prompts(tmp_path / "dup.csv")


def test_a_pair_with_its_prompts_swapped_is_a_repeat(tmp_path):
    frame = _frame(3)
    swapped = frame.iloc[[1]].copy()
    swapped[["prompt_a", "prompt_b"]] = swapped[["prompt_b", "prompt_a"]].to_numpy()
    pd.concat([frame, swapped]).to_csv(tmp_path / "swapped.csv", index=False)
    with pytest.raises(InputError, match=r"\(row 3 repeats row 1\)"):
        load_paired_prompts(tmp_path / "swapped.csv")


def test_distinct_pairs_still_load(tmp_path):
    _frame(4).to_csv(tmp_path / "ok.csv", index=False)
    assert len(load_paired_prompts(tmp_path / "ok.csv")) == 4


def test_the_cli_says_it_in_one_line_with_exit_2(tmp_path, capsys):
    pytest.importorskip("inspect_ai")
    frame = _frame()
    pd.concat([frame, frame]).to_csv(tmp_path / "dup.csv", index=False)
    code, _, err = run_main(
        ["eval", "run", "neutrality_pairs", "--model", "mockllm/model",
         "-T", f"data={tmp_path / 'dup.csv'}", "--out", tmp_path / "logs"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert one_line(err).startswith(
        "trustlab: error: -T data: expected each pair of prompts once (row 2 repeats row 0)"
    )
