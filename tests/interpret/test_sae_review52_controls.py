"""``sae score``'s control is another latent's explanation (the spec): with two latents explained
alike, the next latent's text was this latent's own, so the "shuffled" row scored the true
explanation again and the paired difference was 0 by construction. The control is now the next
latent's explanation whose text differs; explanations all alike leave no control and are
refused."""

from __future__ import annotations

import json
import math

import numpy as np

from cli_helpers import one_line, run_main
from sae_cli_data import explain_folder
from trustlab.interpret import LatentCache


def _folder(tmp_path, texts):
    """An explain folder over a cache where latents 1, 2 and 3 each fire in half of 24 contexts,
    explained by ``texts`` (latent -> text)."""
    n, half = 24, 12
    cache = LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=n, n_tokens=4 * n,
        tokens=np.arange(4 * n) % 50, token_offsets=np.arange(0, 4 * n + 1, 4),
        latent_offsets=np.array([0, 0, half, 2 * half, *[3 * half] * 13]),
        contexts=np.r_[np.arange(0, n, 2), np.arange(1, n, 2), np.arange(0, n, 2)].astype(np.int32),
        positions=np.ones(3 * half, np.int32),
        activations=np.linspace(1, 2, 3 * half).astype(np.float32), sae=None,
    )  # fmt: skip
    expl = explain_folder(tmp_path, cache, n_test=10)
    rows = [{"latent": i, "text": t} for i, t in texts.items()]
    (expl / "explanations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return expl


def _score(tmp_path, capsys, monkeypatch, texts, out="scores"):
    from types import SimpleNamespace

    import trustlab.interpret as interpret
    import trustlab.llm as llm

    def embedding(examples, text, decode):  # a stand-in: the pairing is what is tested
        quantiles = [e.quantile for e in examples.test] + [-1] * len(examples.not_active)
        return SimpleNamespace(auroc=0.5, interval=(math.nan,) * 2,
                               scores=np.zeros(len(quantiles)),
                               quantiles=np.array(quantiles))  # fmt: skip

    subject = SimpleNamespace(tokenizer=SimpleNamespace(decode=lambda ids: "x"))
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: subject)
    monkeypatch.setattr(interpret, "embedding_score", embedding)
    args = ["interpret", "sae", "score", "--explanations", _folder(tmp_path, texts),
            "--methods", "embedding", "--out", tmp_path / out]  # fmt: skip
    return run_main(args, capsys)


def test_the_control_is_another_explanation_text(tmp_path, capsys, monkeypatch):
    texts = {1: "cats", 2: "cats", 3: "dogs"}
    code, out, err = _score(tmp_path, capsys, monkeypatch, texts)
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "scores" / "scores.jsonl").open()]
    controls = {r["latent"]: r["explanation"] for r in rows if r["shuffled"]}
    assert controls == {1: "dogs", 2: "dogs", 3: "cats"}
    assert all(controls[i] != texts[i] for i in texts)


def test_explanations_all_alike_are_refused(tmp_path, capsys, monkeypatch):
    code, out, err = _score(tmp_path, capsys, monkeypatch, {1: "cats", 2: "cats", 3: "cats "})
    assert code == 2
    message = one_line(out + err)
    assert "--explanations" in message and "two different explanations" in message
