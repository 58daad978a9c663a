"""`sae score --methods embedding`: loading the shipped MiniLM writes no "Loading weights" bar.

A fresh process, so that the embedder is loaded here and not by an earlier test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPT = """
import sys
sys.path.insert(0, {here!r})
from test_sae_explain import decode, digit_cache
from trustlab.interpret import embedding_score, latent_examples

cache = digit_cache(5, n_contexts=120, length=60, digit_rate=0.03)
examples = latent_examples(cache, 0, ctx_len=16, n_test=10, n_not_active=10, random_state=5)
result = embedding_score(examples, "numbers written as digits", decode)
from transformers.utils import logging
print(round(result.auroc, 3), logging.is_progress_bar_enabled())
"""


def test_the_shipped_embedder_loads_without_a_progress_bar():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(here=str(HERE))],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=True,
    )
    assert "Loading weights" not in done.stderr, done.stderr
    assert "%|" not in done.stderr, done.stderr
    # the bar is off only while the embedder loads: transformers' own setting is restored
    assert done.stdout.split()[-1] == "True", done.stdout
