"""``trustlab safety context score OUTPUTS --mode M``: a prediction the mode cannot read is named
as the file, with the mode (diff review 63 B of 57bc2a17).

57bc2a17 named a bad OUTPUTS file as the usage line does, but a score-mode file scored with
``--mode binary`` still said ``predictions: expected binary values ...``, a library argument the
command line does not have.
"""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line, run_main


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("binary", "expected binary values 'safe', 'unsafe' or '' (item 0), got 6"),
        ("logits", "expected logits values in [0, 1] (item 0), got 6"),
    ],
)
def test_a_prediction_of_another_mode_names_outputs_and_the_mode(capsys, tmp_path, mode, expected):
    from trustlab.safety.context import synthetic_casebench

    records = synthetic_casebench().records()[:4]
    for record in records:
        record["judge"] = 6  # a score-mode answer (1-10)
    path = tmp_path / "output_score.json"
    path.write_text(json.dumps(records))
    code, _, err = run_main(("safety", "context", "score", path, "--mode", mode), capsys)
    assert code == 2
    assert one_line(err) == f"trustlab: error: OUTPUTS: {expected}; read with --mode {mode}"
