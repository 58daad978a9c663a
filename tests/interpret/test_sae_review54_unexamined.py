"""Review 54: ``sae explain --latents`` naming latents that never fire in the cache wrote them
as empty explanations and said '2 answers had no [EXPLANATION]: marker' (no explainer ran;
with ``--explainer template`` there is no marker at all); it now says they have no activating
example, and result.json counts them apart (n_no_examples)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from cli_helpers import run_main
from sae_cli_data import two_latent_cache

_cache = two_latent_cache  # latents 1 and 2 fire on 12 contexts each; 0 and 3..15 never


def _model(asked):
    def generate(prompts, *args, **kwargs):
        asked.append(prompts)
        return ["[EXPLANATION]: the letter t"]

    return SimpleNamespace(name="m", tokenizer=SimpleNamespace(decode=lambda ids: f"t{ids[0]}"),
                           generate=generate)  # fmt: skip


def test_latents_without_examples_are_named_not_counted_as_unmarked(tmp_path, capsys, monkeypatch):
    import trustlab.llm as llm

    _cache(tmp_path / "cache")
    asked = []
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: _model(asked))
    args = ["interpret", "sae", "explain", "--cache", tmp_path / "cache", "--explainer", "x",
            "--subject", "m", "--latents", "0,1,3", "--min-examples", 1]  # fmt: skip
    code, out, err = run_main([*args, "--out", tmp_path / "e"], capsys)
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "2 latents (0, 3) have no activating example in the cache: not explained" in said
    assert "had no [EXPLANATION]: marker" not in said
    assert len(asked) == 1  # latent 1 only
    result = json.loads((tmp_path / "e" / "result.json").read_text())
    assert (result["n_no_examples"], result["n_without_marker"], result["n_empty"]) == (2, 0, 2)
    code, out, err = run_main([*args, "--out", tmp_path / "j", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out) == json.loads((tmp_path / "j" / "result.json").read_text())
    assert json.loads(out)["n_no_examples"] == 2


def test_template_run_with_one_silent_latent(tmp_path, capsys, monkeypatch):
    import trustlab.llm as llm

    _cache(tmp_path / "cache")
    monkeypatch.setattr(llm, "load_model", lambda *args, **kwargs: _model([]))
    code, out, err = run_main(["interpret", "sae", "explain", "--cache", tmp_path / "cache",
                               "--explainer", "template", "--subject", "m", "--latents", "2,5",
                               "--min-examples", 1, "--out", tmp_path / "e"], capsys)  # fmt: skip
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "1 latent (5) has no activating example in the cache: not explained" in said
    assert "1 of 2 explanations are empty" in said and "answers had no" not in said
