"""Fixtures for the language-model tests (the model itself is the session fixture ``smollm2``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def direct_greedy():
    """``run(lm, ids, n_tokens, top=0)``: greedy decoding by full, unpadded forward passes.

    No cache and no batch: the oracle for the token loop. Returns one ``(token id, log-softmax
    value, [(alternative id, value), ...])`` per generated token, stopping at end-of-sequence.
    """
    import torch

    def run(lm, ids, n_tokens, top=0):
        ids, out = list(ids), []
        for _ in range(n_tokens):
            with torch.inference_mode():
                logits = lm.model(torch.tensor([ids])).logits[0, -1].double()
            logp = torch.log_softmax(logits, dim=-1)
            token = int(logp.argmax())
            if token == lm.tokenizer.eos_token_id:
                break
            values, alternatives = torch.topk(logp, top)
            out.append(
                (
                    token,
                    float(logp[token]),
                    list(zip(alternatives.tolist(), values.tolist(), strict=True)),
                )
            )
            ids.append(token)
        return out

    return run
