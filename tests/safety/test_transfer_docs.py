"""docs/steering-transfer.md: its Python example runs and prints what the page says."""

from __future__ import annotations

import re
from pathlib import Path

import trustlab.safety.transfer as transfer

PAGE = Path(__file__).resolve().parents[2] / "docs" / "steering-transfer.md"


def test_the_python_example_runs(tiny_transfer_study, monkeypatch, capsys):
    study, _ = tiny_transfer_study

    def the_session_study(*args, **kwargs):
        # the page's call is the session fixture's call (tests/conftest.py), which ran once
        assert not args and kwargs == {"random_state": 20}
        assert study.transfer.alphas == (0.5, 1.0, 2.0) and study.transfer.n_random == 3
        return study

    monkeypatch.setattr(transfer, "backdoor_transfer_study", the_session_study)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("steering transfer tiny-source (block 0) -> tiny-target (block 0)")
    assert "alpha 1: the mapped vector lowers the trigger rate by 100 points, random" in out


def test_the_measured_tables_seed_column_is_the_tests_seed(tiny_transfer_study):
    study, _ = tiny_transfer_study
    t = study.transfer
    cells = [line.split("|")[1:-1] for line in PAGE.read_text().splitlines()]
    rows = {c[0].strip(): c[2].strip() for c in cells if len(c) == 4}
    j = t.alphas.index(1.0)  # the scale every sweep chose on seeds 0-7
    assert study.source_sweep.best_alpha == study.target_sweep.best_alpha == 1.0
    assert rows["native source steering, drop"] == f"{t.drops['source_native'][j]:.0f}"
    assert rows["mapped vector in the target, drop"] == f"{t.drops['mapped'][j]:.0f}"
    assert rows["equal-norm random vector, drop (each of 3 draws)"] == f"{t.drops['random'][j]:.0f}"
    assert rows["clean perplexity under the mapped vector"] == (
        f"x{t.perplexity_ratios['mapped'][j]:.3f}"
    )
    assert rows["map held-out FVU"] == f"{t.map_held_out_fvu:.2g}"


def test_the_seed_columns_rates_each_draw_and_cosine_are_the_tests_seed(tiny_transfer_study):
    """The seed-20 cells the test above left unchecked (review 54): both models' rates with and
    without the trigger, the drop of EACH random draw (the row says so; the mean could hide a
    draw that lowers the rate while another raises it) and the cosine."""
    study, _ = tiny_transfer_study
    t = study.transfer
    cells = [line.split("|")[1:-1] for line in PAGE.read_text().splitlines()]
    rows = {c[0].strip(): c[2].strip() for c in cells if len(c) == 4}
    j = t.alphas.index(1.0)
    with_trigger = rows["trigger rate with the trigger, both models"]
    assert (
        f"{100 * t.source_unsteered:.0f} %" == f"{100 * t.target_unsteered:.0f} %" == with_trigger
    )
    without = rows["without the trigger"]
    assert f"{100 * t.source_clean_rate:.0f} %" == f"{100 * t.target_clean_rate:.0f} %" == without
    random_row = rows["equal-norm random vector, drop (each of 3 draws)"]
    assert len(t.random_draws) == 3
    assert [f"{100 * (t.target_unsteered - d[j]):.0f}" for d in t.random_draws] == [random_row] * 3
    assert rows["cosine, mapped vs the target's own vector"] == f"{t.cosine:.3f}"
