"""The second review of ``trustlab interpret sae``: texts past the model's context, and the SAE
a latent cache was written with (recorded, and checked by ``score --methods intervention``)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from sae_cli_data import explain_folder
from trustlab.errors import InputError
from trustlab.interpret import (
    LatentCache,
    SparseAutoencoder,
    cache_latents,
    load_latent_cache,
    sae_activations,
)
from trustlab.interpret.sae.cache import sae_fingerprint

SHORT = ["The cat sat on the mat.", "Numbers such as 12 and 345 appear in texts."]


def _sae(seed: int, width: int = 48) -> SparseAutoencoder:
    rows = np.random.default_rng(seed).normal(size=(64, width)).astype(np.float32)
    return SparseAutoencoder(n_latents=16, k=2, max_epochs=1, batch_size=32, random_state=seed).fit(
        rows
    )


def test_texts_past_the_context_are_warned_about(tiny):
    """The tiny model's context is 256 tokens; a text of about 300 ran through it without a
    word (its tokens past 256 sit at positions the model never saw)."""
    long_text = " ".join(["cat"] * 300)
    assert len(tiny.tokenizer(long_text)["input_ids"]) > 256
    sae = _sae(0)
    with pytest.warns(UserWarning, match=r"1 of 3 texts are longer than the 256-token context"):
        cache_latents(tiny, sae, [*SHORT, long_text], layer=1)
    with pytest.warns(UserWarning, match=r"1 of 3 texts are longer than the 256-token context"):
        sae_activations(tiny, [*SHORT, long_text], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache_latents(tiny, sae, SHORT, layer=1)


def test_a_cache_records_its_sae(tiny, tmp_path):
    """The cache holds a fingerprint of the SAE that encoded it, saved and read back (not in
    its summary); another SAE of the same shape, or the same weights with another k, has
    another one."""
    sae = _sae(0)
    cache = cache_latents(tiny, sae, SHORT, layer=1)
    assert cache.sae == sae_fingerprint(sae)
    assert "sae" not in cache.to_dict()
    cache.save(tmp_path / "c")
    assert load_latent_cache(tmp_path / "c").sae == sae_fingerprint(sae)
    assert sae_fingerprint(_sae(1)) != sae_fingerprint(sae)
    other_k = _sae(0)
    other_k.k = 3
    assert sae_fingerprint(other_k) != sae_fingerprint(sae)


def _folders(tmp_path, recorded):
    """A cache (written with SAE ``recorded``) and an explain folder that names it."""
    contexts = np.zeros(2, np.int32)
    cache = LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=1, n_tokens=3,
        tokens=np.arange(4), token_offsets=np.array([0, 4]),
        latent_offsets=np.array([0, 0, 1, 2, *[2] * 13]), contexts=contexts,
        positions=np.array([1, 2], np.int32), activations=np.ones(2, np.float32),
        sae=None if recorded is None else sae_fingerprint(recorded),
    )  # fmt: skip
    return explain_folder(tmp_path, cache)


@pytest.mark.parametrize("recorded", ["same", "other", "unrecorded"])
def test_intervention_scoring_refuses_another_sae_than_the_caches(
    tmp_path, capsys, monkeypatch, recorded
):
    """``score --methods intervention --sae OTHER`` of the cache's width scored latent i of
    OTHER on the prompts of the cache's latent i; now it is refused before the models load. A
    cache written before the fingerprint (None) is not checked."""
    import trustlab.llm as llm

    def no_loading(*args, **kwargs):
        raise InputError("models: loading (the --sae check passed)", argument="models")

    monkeypatch.setattr(llm, "load_model", no_loading)
    ours, theirs = _sae(0, 8), _sae(1, 8)
    ours.save(tmp_path / "ours")
    theirs.save(tmp_path / "theirs")
    expl = _folders(tmp_path, None if recorded == "unrecorded" else ours)
    given = tmp_path / ("theirs" if recorded in ("other", "unrecorded") else "ours")
    args = ["interpret", "sae", "score", "--explanations", expl, "--methods", "intervention",
            "--sae", given, "--scorer", "m", "--out", tmp_path / "scores"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    wanted = "--sae" if recorded == "other" else "models"
    # an unrecorded cache is warned about (the SAE cannot be checked) before the error line
    last = err.strip().splitlines()[-1] if recorded == "unrecorded" else one_line(err)
    assert code == 2 and last.startswith(f"trustlab: error: {wanted}"), err


def test_a_method_named_twice_runs_once(tmp_path, capsys, monkeypatch):
    """``--methods embedding,embedding`` scored every explanation twice and listed the method
    twice in result.json."""
    from types import SimpleNamespace

    import trustlab.interpret as interpret
    import trustlab.llm as llm

    calls = []

    def embedding(examples, text, decode):
        calls.append(text)
        return SimpleNamespace(auroc=0.5, interval=(0.4, 0.6), scores=np.zeros(0),
                               quantiles=np.zeros(0, np.int64))  # fmt: skip

    subject = SimpleNamespace(tokenizer=SimpleNamespace(decode=lambda ids: "x"))
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: subject)
    monkeypatch.setattr(interpret, "embedding_score", embedding)
    expl = _folders(tmp_path, None)
    args = ["interpret", "sae", "score", "--explanations", expl, "--methods",
            "embedding,embedding", "--out", tmp_path / "scores", "--json"]  # fmt: skip
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    assert len(calls) == 4  # two latents, each with its true and its shuffled explanation
    assert json.loads(out)["methods"] == ["embedding"]


def test_latents_without_a_score_are_said_not_warned(tmp_path, capsys, monkeypatch):
    """When no latent had a score (NaN: no non-activating example found, say), numpy's 'Mean of
    empty slice' RuntimeWarning reached stderr and nothing said why the mean was nan."""
    from types import SimpleNamespace

    import trustlab.interpret as interpret
    import trustlab.llm as llm

    def embedding(examples, text, decode):
        return SimpleNamespace(auroc=float("nan"), interval=(float("nan"),) * 2,
                               scores=np.zeros(0), quantiles=np.zeros(0, np.int64))  # fmt: skip

    subject = SimpleNamespace(tokenizer=SimpleNamespace(decode=lambda ids: "x"))
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: subject)
    monkeypatch.setattr(interpret, "embedding_score", embedding)
    expl = _folders(tmp_path, None)
    args = ["interpret", "sae", "score", "--explanations", expl, "--methods", "embedding",
            "--out", tmp_path / "scores"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out, err = run_main(args, capsys)
    assert code == 0, err
    assert "embedding: 2 of 2 latents have no score" in out
    assert json.loads((tmp_path / "scores" / "result.json").read_text())["means"]["true"] == {
        "embedding": None
    }
