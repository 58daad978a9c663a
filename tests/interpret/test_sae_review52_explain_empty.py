"""``sae explain``'s text summary said 'wrote 12 explanations' when the explainer's answers held
no text (a small model answering blank lines: every explanation empty, no marker), and ``sae
score`` then refused the folder; the summary now says how many are empty and unmarked."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from cli_helpers import run_main
from trustlab.interpret import LatentCache


def test_explain_says_how_many_explanations_are_empty(tmp_path, capsys, monkeypatch):
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
    answers = iter(["\n\n\n", "the letter t"])  # latent 1 blank, latent 2 without the marker
    model = SimpleNamespace(
        name="blank", tokenizer=SimpleNamespace(decode=lambda ids: f"t{ids[0]}"),
        generate=lambda prompts, *args, **kwargs: [next(answers)],
    )  # fmt: skip
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: model)
    code, out, err = run_main(["interpret", "sae", "explain", "--cache", tmp_path / "cache",
                               "--explainer", "blank", "--subject", "m", "--latents", "1,2",
                               "--min-examples", 1, "--out", tmp_path / "expl"], capsys)  # fmt: skip
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "1 of 2 explanations are empty" in said
    assert "2 answers had no [EXPLANATION]: marker" in said
