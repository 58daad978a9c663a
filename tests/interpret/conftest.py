"""Fixtures shared by the SAE tests."""

from __future__ import annotations

import pytest
import torch

from tiny_llama import tiny_llama


@pytest.fixture(scope="module")
def tiny(smollm2):
    """A 2-layer Llama of width 48 with random weights on SmolLM2's tokenizer (the same
    weights in every module: ``tiny_llama`` seeds them)."""
    torch.set_num_threads(1)
    return tiny_llama(smollm2.tokenizer, smollm2.model.config.vocab_size, hidden_size=48)
