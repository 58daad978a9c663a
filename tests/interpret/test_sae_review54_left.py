"""Review 54, items left: ``template_explanation`` refuses examples with no training example
as ``explanation_prompt`` does (it returned '' marked as found); ``sae explain --latents 3-1``
says the range is reversed (it said the latents were outside [0, n - 1]); a 2-row fit holds
out no row (it held out one, so the held-out FVU was NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from trustlab.errors import InputError
from trustlab.interpret import (
    LatentCache,
    SparseAutoencoder,
    explanation_prompt,
    latent_examples,
    template_explanation,
)


def _cache():
    # latent 1 fires twice in one context, latents 0 and 3 never
    return LatentCache(
        model="m", layer=1, n_latents=4, n_contexts=1, n_tokens=3,
        tokens=np.arange(4), token_offsets=np.array([0, 4]),
        latent_offsets=np.array([0, 0, 2, 2, 2]), contexts=np.zeros(2, np.int32),
        positions=np.array([1, 2], np.int32), activations=np.ones(2, np.float32), sae=None,
    )  # fmt: skip


def _decode(token):
    return f" t{token}"


@pytest.mark.parametrize("latent", [0, 1])
def test_the_template_refuses_what_the_prompt_refuses(latent):
    # latent 0 never fires; latent 1 fires but n_train=0 keeps no training example
    examples = latent_examples(_cache(), latent, n_train=0 if latent else 4, min_examples=1)
    assert not examples.train
    for call in (explanation_prompt, template_explanation):
        with pytest.raises(InputError, match="^examples: expected at least one training example"):
            call(examples, _decode)


def test_the_template_checks_decode_and_threshold_as_the_prompt_does():
    examples = latent_examples(_cache(), 1, n_train=4, min_examples=1)
    assert template_explanation(examples, _decode).text  # it names the marked tokens
    for call in (explanation_prompt, template_explanation):
        with pytest.raises(InputError, match="^decode: expected a callable"):
            call(examples, "decode")
        with pytest.raises(InputError, match="^threshold: "):
            call(examples, _decode, threshold=1.5)


@pytest.mark.parametrize("latents", ["3-1", "0,3-2"])
def test_a_reversed_range_of_latents_is_named_so(tmp_path, capsys, latents):
    _cache().save(tmp_path / "cache")
    args = ["interpret", "sae", "explain", "--cache", tmp_path / "cache", "--explainer",
            "template", "--latents", latents, "--out", tmp_path / "out"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --latents: ") and "reversed range" in line
    assert "[0, 3]" not in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fraction", [0.05, 0.5, 0.9])
def test_two_rows_hold_none_out(fraction):
    X = np.random.default_rng(3).normal(size=(2, 8))
    fit = SparseAutoencoder(n_latents=4, k=2, max_epochs=2, batch_size=8,
                            validation_fraction=fraction).fit(X).fit_  # fmt: skip
    assert fit.n_held_out == 0 and fit.n_rows == 2
    assert math.isfinite(fit.fvu)
    assert "training" in fit.summary()


def test_three_rows_hold_two_out():
    X = np.random.default_rng(4).normal(size=(3, 8))
    fit = SparseAutoencoder(n_latents=4, k=2, max_epochs=2, batch_size=8,
                            validation_fraction=0.5).fit(X).fit_  # fmt: skip
    assert fit.n_held_out == 2 and math.isfinite(fit.fvu)
