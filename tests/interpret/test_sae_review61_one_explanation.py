"""``sae explain --latents 1`` said 'wrote 1 explanations to ...' (review 61; review 54 mended the
same plural in its marker line)."""

from __future__ import annotations

from types import SimpleNamespace

from cli_helpers import run_main
from sae_cli_data import two_latent_cache


def test_one_explanation_is_said_in_the_singular(tmp_path, capsys, monkeypatch):
    import trustlab.llm as llm

    two_latent_cache(tmp_path / "cache")
    model = SimpleNamespace(
        name="plain", tokenizer=SimpleNamespace(decode=lambda ids: f"t{ids[0]}"),
        generate=lambda prompts, *args, **kwargs: ["[EXPLANATION]: the letter t"],
    )  # fmt: skip
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: model)
    code, out, err = run_main(["interpret", "sae", "explain", "--cache", tmp_path / "cache",
                               "--explainer", "plain", "--subject", "m", "--latents", "1",
                               "--min-examples", 1, "--out", tmp_path / "expl"], capsys)  # fmt: skip
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "wrote 1 explanation to " in said and "explanations to" not in said
