"""``explanation_logprobs`` runs passages of equal token length in one batch after the shared
worked examples (speed, stop 63) where every matrix product keeps 4 rows or more; float32
products gave each row the same bits for any such row count on the machine this was written on
(measured: bit for bit equal to one call per passage). Another CPU's BLAS may round a row
differently with the row count, so the test allows float32 rounding (1e-4 on log-probabilities
of a few units, as the other batched-path tests)."""

from __future__ import annotations

import numpy as np

from trustlab.interpret.sae.effects import _passage_batches, explanation_logprobs

# the first three tokenize to the same length, the last to another
PASSAGES = ["The cat sat on the mat", "The dog sat on the rug", "The cat sat on the mat",
            "Numbers 12, 45 and 7 are written inside the box"]  # fmt: skip
EXPLANATIONS = ["cats", "numbers", "the weather"]  # 3 rows of 2 tokens: 6 rows a pass


def test_equal_length_passages_run_together(tiny):
    import torch

    padded = [torch.zeros((3, 2), dtype=torch.long)]
    batches = _passage_batches(tiny.tokenizer, PASSAGES, [[0, 1, 2]], padded)
    assert [js for js, _ in batches] == [[0, 1, 2], [3]]
    # a pass of fewer than 4 rows (one explanation of 2 tokens) keeps every passage alone
    alone = _passage_batches(tiny.tokenizer, PASSAGES, [[0]], [torch.zeros((1, 2))])
    assert [js for js, _ in alone] == [[0], [1], [2], [3]]


def test_grouped_passages_equal_one_call_per_passage(tiny):
    for batch in (True, False):
        grouped = explanation_logprobs(tiny, PASSAGES, EXPLANATIONS, batch=batch)
        one = [explanation_logprobs(tiny, [p], EXPLANATIONS, batch=batch) for p in PASSAGES]
        assert grouped.shape == (3, 4)
        assert np.allclose(grouped, np.hstack(one), rtol=0, atol=1e-4)
        assert np.allclose(grouped[:, 0], grouped[:, 2], rtol=0, atol=1e-4)
