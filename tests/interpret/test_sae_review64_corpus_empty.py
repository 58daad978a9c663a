"""A token budget too small to take one text is refused (review 64).

offline_corpus(10, sources=["pydoc"]) returned [] (and cached it), and `sae corpus --tokens 10`
wrote an empty corpus.txt with exit 0; the failure came only at `sae train --texts`. Now an
InputError names n_tokens (--tokens in the CLI) and nothing is cached. pydoc reads in well under
a second.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.interpret import offline_corpus


def test_a_budget_that_takes_no_text_is_refused_and_not_cached(tmp_path):
    with pytest.raises(InputError, match="n_tokens: expected a budget that takes at least one"):
        offline_corpus(10, sources=["pydoc"], cache_dir=tmp_path)
    assert not list((tmp_path / "corpora").glob("*/corpus.txt"))
    assert len(offline_corpus(60, sources=["pydoc"], cache_dir=tmp_path)) >= 1  # one that takes
