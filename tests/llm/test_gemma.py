"""Gemma-3-270M, really loaded: the packaged GGUF through ``load_model("gemma3-270m")`` (the first
load dequantizes it and caches a safetensors copy: about 40 s of CPU, 2.7 GB peak memory; a
cached load about 9 s), then a few greedy tokens and log-probabilities that a broken model fails.

Every threshold below is far from what a working model gives and far from what a damaged one
gives (measured here, in nats): the seven right continuations beat the wrong ones by 3.9 to 7.9;
with the llama.cpp rotary permutation of q and k left in place, two of the seven fall to 0.7 and
-0.6; with noise of half a weight's spread on every matrix, five fall below 1.3. Floating-point
differences between CPUs move these figures by about 1e-4.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from background_helpers import GEMMA_CACHE
from trustlab.llm import load_model

pytestmark = pytest.mark.slow

# (prompt, the right continuation, a wrong one)
FACTS = [
    ("The capital of France is", " Paris", " Berlin"),
    ("The capital of Japan is", " Tokyo", " Paris"),
    ("Water boils at 100 degrees", " Celsius", " Kelvin"),
    ("One, two, three, four,", " five", " nine"),
    ("Monday, Tuesday,", " Wednesday", " Friday"),
    ("The opposite of hot is", " cold", " blue"),
    ("Paris is the capital of", " France", " Germany"),
]
MIN_MARGIN = 2.0  # nats; measured 3.9 to 7.9 (working), down to -0.6 (damaged)


# Gemma's first load in a session fills the safetensors cache (about 50 CPU-s): done by the
# suite's background worker while other tests run (tests/background_jobs.py)
BACKGROUND_JOBS = {"gemma-cache": GEMMA_CACHE}


@pytest.fixture(scope="module")
def gemma(background):
    background.result("gemma-cache", GEMMA_CACHE)  # its cache filled (by the worker, mostly)
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_model("gemma3-270m")
    torch.set_num_threads(previous)


def test_the_packaged_gemma_loads_as_the_base_model(gemma):
    assert gemma.name == "gemma3-270m"
    assert (gemma.n_layers, gemma.hidden_size) == (18, 640)
    assert not gemma.has_chat_template  # the packaged GGUF is the base model
    assert gemma.model.config.vocab_size == 262144


def test_greedy_continuation_of_sequences(gemma):
    # the first tokens win by at least 1.09 nats at every step (measured), so no near tie decides
    out = gemma.generate(
        ["One, two, three, four,", "Monday, Tuesday, Wednesday,"], 6, chat=False, batch_size=2
    )
    assert out[0].startswith(" five, six, seven"), out
    assert out[1].startswith(" Thursday, Friday"), out


def test_right_continuations_are_far_more_likely_than_wrong_ones(gemma):
    prompts = [p for p, _, _ in FACTS]
    right = gemma.logprobs(prompts, [r for _, r, _ in FACTS])
    wrong = gemma.logprobs(prompts, [w for _, _, w in FACTS])
    margins = right - wrong
    print("log-probability margins (nats):", np.round(margins, 2))
    assert np.all(margins >= MIN_MARGIN), margins
