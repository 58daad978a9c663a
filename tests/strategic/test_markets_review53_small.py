"""The small-data rule of the trained learners as the docs state it: validation users are held
out from the row count the docs give (at validation_fraction=0.2), not below it (review 5)."""

import re
from pathlib import Path

import pytest

from trustlab.strategic import MarketAwareClassifier, learners, make_market_population

DOCS = Path(__file__).resolve().parents[2] / "docs" / "strategic-markets.md"


def _held_out(n_rows, monkeypatch):
    """Whether fit on ``n_rows`` users holds validation users out of training."""
    seen = []
    scorer = learners._validation_scorer

    def spy(data, *args, **kwargs):
        seen.append(len(data.train) + len(data.val) == len(data.X))
        return scorer(data, *args, **kwargs)

    monkeypatch.setattr(learners, "_validation_scorer", spy)
    X, y, b = make_market_population(n_rows, random_state=0)
    params = dict(max_epochs=1, n_restarts=1, validation_resamples=0, random_state=0)
    MarketAwareClassifier(**params).fit(X, y, budgets=b)
    return seen == [True]


def test_docs_give_the_first_row_count_that_holds_validation_users_out(monkeypatch):
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    match = re.search(r"from (\d+) rows at `validation_fraction=0.2`", text)
    assert match, "the docs state the small-data threshold"
    first = int(match.group(1))
    assert _held_out(first, monkeypatch)
    assert not _held_out(first - 1, monkeypatch)


@pytest.mark.parametrize("n_rows, held_out", [(47, False), (48, True), (49, True), (50, True)])
def test_validation_users_are_held_out_when_both_parts_have_ten(n_rows, held_out, monkeypatch):
    assert _held_out(n_rows, monkeypatch) is held_out
