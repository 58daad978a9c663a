"""``sae explain`` said '1 answers had no [EXPLANATION]: marker (their first line was kept)'."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from cli_helpers import run_main
from trustlab.interpret import LatentCache


def test_one_unmarked_answer_is_said_in_the_singular(tmp_path, capsys, monkeypatch):
    import trustlab.llm as llm

    n, half = 24, 12
    LatentCache(
        model="m", layer=1, n_latents=16, n_contexts=n, n_tokens=4 * n,
        tokens=np.arange(4 * n) % 50, token_offsets=np.arange(0, 4 * n + 1, 4),
        latent_offsets=np.array([0, 0, half, *[2 * half] * 14]),
        contexts=np.r_[np.arange(0, n, 2), np.arange(1, n, 2)].astype(np.int32),
        positions=np.ones(2 * half, np.int32),
        activations=np.linspace(1, 2, 2 * half).astype(np.float32), sae=None,
    ).save(tmp_path / "cache")  # fmt: skip
    model = SimpleNamespace(
        name="plain", tokenizer=SimpleNamespace(decode=lambda ids: f"t{ids[0]}"),
        generate=lambda prompts, *args, **kwargs: ["the letter t"],
    )  # fmt: skip
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: model)
    code, out, err = run_main(["interpret", "sae", "explain", "--cache", tmp_path / "cache",
                               "--explainer", "plain", "--subject", "m", "--latents", "1",
                               "--min-examples", 1, "--out", tmp_path / "expl"], capsys)  # fmt: skip
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "1 answer had no [EXPLANATION]: marker (its first line was kept)" in said
