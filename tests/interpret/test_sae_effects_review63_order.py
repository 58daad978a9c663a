"""Review 63 of the grouped passages in ``explanation_logprobs``: column ``j`` is passage ``j``
when passages of two token lengths interleave and every passage of a batch differs in content
(the speed test's batch holds a passage twice at both ends, so a batch read back in reverse
order passes it), with explanations of 1, 5 and 7 tokens, ``batch`` True and False."""

from __future__ import annotations

import numpy as np

from trustlab.interpret.sae.effects import _passage_batches, explanation_logprobs

# lengths alternate (0, 2, 4 one length; 1, 3 another); no two passages are the same
PASSAGES = ["The cat sat on the mat", "Numbers 12, 45 and 7 are written inside the box",
            "The dog sat on the rug", "Numbers 13, 46 and 8 are written inside the bag",
            "The owl sat on the log"]  # fmt: skip
EXPLANATIONS = ["cats", "dogs and cats and mice", "volcanic eruptions in northern Europe"]


def test_interleaved_passages_come_back_in_order(tiny):
    tok = tiny.tokenizer
    widths = [len(tok(e, add_special_tokens=False)["input_ids"]) for e in EXPLANATIONS]
    assert widths == [1, 5, 7]
    groups = [[0], [1], [2]]  # batch=False: every pass keeps >= 4 rows or is a 1-token read
    padded = [np.zeros((1, w)) for w in widths]
    assert [js for js, _ in _passage_batches(tok, PASSAGES, groups, padded)] == [[0, 2, 4], [1, 3]]
    for batch in (True, False):
        grouped = explanation_logprobs(tiny, PASSAGES, EXPLANATIONS, batch=batch)
        one = np.hstack(
            [explanation_logprobs(tiny, [p], EXPLANATIONS, batch=batch) for p in PASSAGES]
        )
        # passages differ by far more than float32 rounding, so a misplaced column shows
        gaps = [np.abs(one[:, a] - one[:, b]).max() for a, b in ((0, 2), (0, 4), (2, 4), (1, 3))]
        assert min(gaps) > 1e-3  # measured 4.6e-3 on the random tiny model
        assert np.allclose(grouped, one, rtol=0, atol=1e-4)
