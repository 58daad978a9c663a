"""``trustlab interpret sae``: run folders read back from another directory, damaged run
folders, and how ``explain`` draws latents (the fixes of the December 2026 review)."""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line, run_main
from sae_cli_data import SETTINGS, TEXTS, train_args
from trustlab.interpret import load_sae


def test_a_model_folder_run_goes_on_from_another_directory(
    tmp_path, capsys, tiny_llama_folder, monkeypatch
):
    """A model folder given by a relative path is recorded by its absolute path: ``train``
    stored the path as typed and ``cache`` only the folder's last component, so ``cache`` and
    ``explain`` run from another directory failed to find the model (or found another)."""
    from trustlab.interpret import load_latent_cache

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    monkeypatch.chdir(tiny_llama_folder.parent)
    train = [*train_args(tiny_llama_folder.name, texts), *SETTINGS, "--out", tmp_path / "sae"]
    assert run_main(train, capsys)[0] == 0
    assert load_sae(tmp_path / "sae").model_name_ == str(tiny_llama_folder.resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cache = ["interpret", "sae", "cache", "--sae", tmp_path / "sae", "--texts", texts,
             "--out", tmp_path / "cache"]  # fmt: skip
    code, _, err = run_main(cache, capsys)
    assert code == 0, err
    assert load_latent_cache(tmp_path / "cache").model == str(tiny_llama_folder.resolve())
    explain = ["interpret", "sae", "explain", "--cache", tmp_path / "cache", "--explainer",
               "template", "--max-latents", 2, "--min-examples", 1, "--n-train", 4,
               "--out", tmp_path / "expl", "--json"]  # fmt: skip
    code, stdout, err = run_main(explain, capsys)
    assert code == 0, err
    assert json.loads(stdout)["subject"] == str(tiny_llama_folder.resolve())
    # so is a --subject given by a relative path (score and report load it again)
    monkeypatch.chdir(tiny_llama_folder.parent)
    code, stdout, err = run_main(
        [*explain[:-3], "--subject", tiny_llama_folder.name, "--out", tmp_path / "e3", "--json"],
        capsys,
    )
    assert code == 0, err
    assert json.loads(stdout)["subject"] == str(tiny_llama_folder.resolve())
    # a negative seed reached numpy's generator: 'unexpected failure: ValueError', exit 1
    code, _, err = run_main([*explain[:-3], "--seed", -1, "--out", tmp_path / "e2"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --seed"), err
    # a run written before: the model folder recorded by its last component alone; from
    # another directory the error named load_model's own 'name_or_path'
    monkeypatch.chdir(elsewhere)
    for name, key in (("cache/latent_cache.json", "model"), ("expl/result.json", "subject")):
        recorded = json.loads((tmp_path / name).read_text())
        (tmp_path / name).write_text(json.dumps({**recorded, key: tiny_llama_folder.name}))
    code, _, err = run_main([*explain[:-3], "--out", tmp_path / "e4"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --cache"), err
    assert repr(tiny_llama_folder.name) in err
    score = ["interpret", "sae", "score", "--explanations", tmp_path / "expl", "--methods",
             "embedding", "--out", tmp_path / "scores"]  # fmt: skip
    code, _, err = run_main(score, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --explanations"), err


_EXPLAIN_INFO = {"explainer": "template", "subject": "m", "cache": "c", "n_train": 4,
                 "n_test": 50, "min_examples": 1, "seed": 0}  # fmt: skip
_EXPLAIN_ROWS = [{"latent": 1, "text": "cats"}, {"latent": 2, "text": "dogs"}]


@pytest.mark.parametrize(
    ("info", "rows"),
    [
        ({k: v for k, v in _EXPLAIN_INFO.items() if k != "cache"}, _EXPLAIN_ROWS),
        ([1, 2], _EXPLAIN_ROWS),
        (_EXPLAIN_INFO, [{"latent": 1, "text": "cats"}, {"latent": 2}]),
        (_EXPLAIN_INFO, [{"latent": "1", "text": "cats"}, {"latent": 2, "text": "dogs"}]),
    ],
    ids=["no-cache", "not-a-dict", "row-without-text", "latent-a-string"],
)
def test_score_a_damaged_explanations_folder_is_one_line(tmp_path, capsys, info, rows):
    """A hand-edited result.json or explanations.jsonl gave 'unexpected failure: KeyError'
    (or TypeError) before the models loaded."""
    expl = tmp_path / "expl"
    expl.mkdir()
    (expl / "result.json").write_text(json.dumps(info), encoding="utf-8")
    (expl / "explanations.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    args = ["interpret", "sae", "score", "--explanations", expl, "--methods", "embedding",
            "--out", tmp_path / "scores"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --explanations"), err


@pytest.mark.parametrize("n", [0, -1])
def test_score_needs_non_activating_examples_before_the_models_load(
    tmp_path, capsys, monkeypatch, n
):
    """0 wrote NaN for every score without a word; -1 was refused only after the models
    loaded."""
    import trustlab.llm as llm

    def no_loading(*args, **kwargs):
        raise AssertionError("the models loaded before the options were checked")

    monkeypatch.setattr(llm, "load_model", no_loading)
    expl = tmp_path / "expl"
    expl.mkdir()
    (expl / "result.json").write_text(json.dumps(_EXPLAIN_INFO), encoding="utf-8")
    (expl / "explanations.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _EXPLAIN_ROWS), encoding="utf-8"
    )
    args = ["interpret", "sae", "score", "--explanations", expl, "--methods", "embedding",
            "--n-not-active", n, "--out", tmp_path / "scores"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --n-not-active"), err


def test_explain_draws_latents_by_their_activating_examples(tmp_path, capsys, tiny_llama_folder):
    """``--min-examples`` is the spec's bound on activating examples (windows), what
    ``latent_examples(...).explainable`` checks; latents were drawn by firing tokens, so most
    drawn latents had fewer examples than the bound."""
    from trustlab.interpret import latent_examples, load_latent_cache, pydoc_texts

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(pydoc_texts(600)[:60]), encoding="utf-8")
    train = train_args(tiny_llama_folder, texts)
    assert run_main([*train, *SETTINGS, "--out", tmp_path / "sae"], capsys)[0] == 0
    cache_args = ["interpret", "sae", "cache", "--sae", tmp_path / "sae", "--texts", texts]
    assert run_main([*cache_args, "--out", tmp_path / "cache"], capsys)[0] == 0
    cache = load_latent_cache(tmp_path / "cache")
    bound = 150
    examples = {
        i: latent_examples(cache, i, n_train=0, n_test=0, n_not_active=0).n_activating
        for i in range(cache.n_latents)
    }
    enough = sorted(i for i, n in examples.items() if n >= bound)
    # the case at stake: latents firing on enough tokens in fewer windows
    assert any(cache.firing_counts[i] >= bound > n for i, n in examples.items())
    assert enough
    explain = ["interpret", "sae", "explain", "--cache", tmp_path / "cache", "--subject",
               tiny_llama_folder, "--explainer", "template", "--max-latents", cache.n_latents,
               "--min-examples", bound, "--n-train", 4, "--out", tmp_path / "expl"]  # fmt: skip
    code, _, err = run_main(explain, capsys)
    assert code == 0, err
    lines = (tmp_path / "expl" / "explanations.jsonl").read_text().splitlines()
    assert [json.loads(x)["latent"] for x in lines] == enough
