"""``sae explain`` on one latent speaks in the singular: it said '1 answers had no
[EXPLANATION]: marker (their first line was kept)' (review 54) and 'wrote 1 explanations to ...'
(review 61)."""

from __future__ import annotations

from types import SimpleNamespace

from cli_helpers import run_main
from sae_cli_data import two_latent_cache


def _explain_one_latent(tmp_path, capsys, monkeypatch, answer: str) -> str:
    """What ``sae explain --latents 1`` says with an explainer that answers ``answer``."""
    import trustlab.llm as llm

    two_latent_cache(tmp_path / "cache")
    model = SimpleNamespace(
        name="plain", tokenizer=SimpleNamespace(decode=lambda ids: f"t{ids[0]}"),
        generate=lambda prompts, *args, **kwargs: [answer],
    )  # fmt: skip
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: model)
    code, out, err = run_main(["interpret", "sae", "explain", "--cache", tmp_path / "cache",
                               "--explainer", "plain", "--subject", "m", "--latents", "1",
                               "--min-examples", 1, "--out", tmp_path / "expl"], capsys)  # fmt: skip
    assert code == 0, err
    return " ".join((out + err).split())


def test_one_unmarked_answer_is_said_in_the_singular(tmp_path, capsys, monkeypatch):
    said = _explain_one_latent(tmp_path, capsys, monkeypatch, "the letter t")
    assert "1 answer had no [EXPLANATION]: marker (its first line was kept)" in said


def test_one_explanation_is_said_in_the_singular(tmp_path, capsys, monkeypatch):
    said = _explain_one_latent(tmp_path, capsys, monkeypatch, "[EXPLANATION]: the letter t")
    assert "wrote 1 explanation to " in said and "explanations to" not in said
