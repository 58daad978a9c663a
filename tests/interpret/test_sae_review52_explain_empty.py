"""``sae explain``'s text summary said 'wrote 12 explanations' when the explainer's answers held
no text (a small model answering blank lines: every explanation empty, no marker), and ``sae
score`` then refused the folder; the summary now says how many are empty and unmarked."""

from __future__ import annotations

from types import SimpleNamespace

from cli_helpers import run_main
from sae_cli_data import two_latent_cache


def test_explain_says_how_many_explanations_are_empty(tmp_path, capsys, monkeypatch):
    import trustlab.llm as llm

    two_latent_cache(tmp_path / "cache")
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
