"""``sae score`` and ``sae report`` rebuild each latent's split of examples from the cache an
``explain`` run names. A cache written anew in that folder since (``sae cache --overwrite``) gave
another split without a word, so the scores could use examples the explainer saw; ``explain``
now records the cache's sha256 and the later steps refuse another cache there."""

from __future__ import annotations

import json
import math

import numpy as np

from cli_helpers import one_line, run_main
from trustlab.interpret import LatentCache


def _cache(shift):
    """Latents 1 and 2 fire in alternate contexts of 24 (activations moved by ``shift``)."""
    n, half = 24, 12
    return LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=n, n_tokens=4 * n,
        tokens=np.arange(4 * n) % 50, token_offsets=np.arange(0, 4 * n + 1, 4),
        latent_offsets=np.array([0, 0, half, *[2 * half] * 14]),
        contexts=np.r_[np.arange(0, n, 2), np.arange(1, n, 2)].astype(np.int32),
        positions=np.ones(2 * half, np.int32),
        activations=(np.linspace(1, 2, 2 * half) + shift).astype(np.float32), sae=None,
    )  # fmt: skip


def test_score_and_report_refuse_a_cache_written_anew(tmp_path, capsys, monkeypatch):
    from types import SimpleNamespace

    import trustlab.interpret as interpret
    import trustlab.llm as llm

    def embedding(examples, text, decode):  # a stand-in: the cache check is what is tested
        quantiles = [e.quantile for e in examples.test] + [-1] * len(examples.not_active)
        return SimpleNamespace(auroc=0.5, interval=(math.nan,) * 2,
                               scores=np.arange(len(quantiles), dtype=float),
                               quantiles=np.array(quantiles))  # fmt: skip

    subject = SimpleNamespace(tokenizer=SimpleNamespace(decode=lambda ids: f"t{ids[0]}"))
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: subject)
    monkeypatch.setattr(interpret, "embedding_score", embedding)
    cache, expl = tmp_path / "cache", tmp_path / "expl"
    _cache(0.0).save(cache)
    code, out, err = run_main(["interpret", "sae", "explain", "--cache", cache, "--explainer",
                               "template", "--subject", "m", "--latents", "1,2",
                               "--min-examples", 1, "--out", expl], capsys)  # fmt: skip
    assert code == 0, err
    assert len(json.loads((expl / "result.json").read_text())["cache_sha256"]) == 64
    score = ["interpret", "sae", "score", "--explanations", expl, "--methods", "embedding",
             "--n-test", 10, "--out", tmp_path / "scores"]  # fmt: skip
    code, out, err = run_main(score, capsys)
    assert code == 0, err
    report = ["interpret", "sae", "report", "--scores", tmp_path / "scores", "--out",
              tmp_path / "report"]  # fmt: skip
    code, out, err = run_main(report, capsys)
    assert code == 0, err

    _cache(0.5).save(cache)  # `sae cache --overwrite` into the same folder
    for args in ([*score[:-1], tmp_path / "scores2"], [*report[:-1], tmp_path / "report2"]):
        code, out, err = run_main(args, capsys)
        assert code == 2, err
        message = one_line(out + err)
        assert message.startswith("trustlab: error: --explanations") and "written anew" in message
