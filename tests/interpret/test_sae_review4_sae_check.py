"""``sae score --methods intervention --sae`` with a cache written before trustlab recorded its
SAE's fingerprint: nothing was checked and nothing said so. Now an SAE with another number of
latents is refused, and one with the same number is scored with a warning that it cannot be
checked."""

from __future__ import annotations

import numpy as np

from cli_helpers import one_line, run_main
from sae_cli_data import explain_folder
from trustlab.errors import InputError
from trustlab.interpret import LatentCache, SparseAutoencoder


def _sae(n_latents: int) -> SparseAutoencoder:
    rows = np.random.default_rng(1).normal(size=(64, 8)).astype(np.float32)
    return SparseAutoencoder(
        n_latents=n_latents, k=2, max_epochs=1, batch_size=32, random_state=1
    ).fit(rows)


def _unrecorded_cache_folders(tmp_path):
    cache = LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=1, n_tokens=3,
        tokens=np.arange(4), token_offsets=np.array([0, 4]),
        latent_offsets=np.array([0, 0, 1, 2, *[2] * 13]), contexts=np.zeros(2, np.int32),
        positions=np.array([1, 2], np.int32), activations=np.ones(2, np.float32), sae=None,
    )  # fmt: skip
    return explain_folder(tmp_path, cache)


def _score(tmp_path, capsys, monkeypatch, n_latents):
    import trustlab.llm as llm

    def no_loading(*args, **kwargs):
        raise InputError("models: loading (the --sae check passed)", argument="models")

    monkeypatch.setattr(llm, "load_model", no_loading)
    _sae(n_latents).save(tmp_path / "sae")
    args = ["interpret", "sae", "score", "--explanations", _unrecorded_cache_folders(tmp_path),
            "--methods", "intervention", "--sae", tmp_path / "sae", "--scorer", "m",
            "--out", tmp_path / "scores"]  # fmt: skip
    return run_main(args, capsys)


def test_an_unrecorded_cache_warns_that_the_sae_cannot_be_checked(tmp_path, capsys, monkeypatch):
    code, _, err = _score(tmp_path, capsys, monkeypatch, 16)
    assert "cannot be checked to be the SAE that encoded it" in " ".join(err.split())
    assert code == 2 and err.strip().splitlines()[-1].startswith("trustlab: error: models")


def test_an_unrecorded_cache_refuses_an_sae_of_another_width(tmp_path, capsys, monkeypatch):
    code, _, err = _score(tmp_path, capsys, monkeypatch, 32)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --sae: expected the SAE the cache")
    assert "16 latents, got 32" in one_line(err)
