"""``trustlab interpret sae train``: the command trains the library's SAE and saves it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from cli_helpers import one_line, run_main

from tiny_llama import tiny_llama
from trustlab.interpret import SparseAutoencoder, load_sae, sae_activations
from trustlab.llm import load_model

TEXTS = [
    "Sparse autoencoders split activations into many rarely active latents.",
    "Each latent should stand for one thing a reader can name.",
    "The cat sat on the mat, and the dog lay by the door.",
    "Numbers such as 12, 345 and 6789 appear in many texts.",
] * 3
SETTINGS = ["--n-latents", 64, "--k", 4, "--max-epochs", 2, "--batch-size", 32, "--seed", 3]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory, smollm2):
    """A 2-layer Llama of width 48 with random weights on SmolLM2's tokenizer, saved."""
    folder = tmp_path_factory.mktemp("tiny") / "tiny-llama"
    tiny_llama(smollm2.tokenizer, smollm2.model.config.vocab_size, hidden_size=48).save(folder)
    return folder


def test_train_saves_the_library_sae(tmp_path, capsys, tiny_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n\n", encoding="utf-8")
    out = tmp_path / "sae"
    args = ["interpret", "sae", "train", "--model", tiny_folder, "--layer", 1, "--texts", texts]
    code, stdout, err = run_main([*args, *SETTINGS, "--out", out, "--json"], capsys)
    assert code == 0, err
    fit = json.loads(stdout)
    assert (fit["d_in"], fit["n_latents"], fit["k"], fit["epochs"]) == (48, 64, 4, 2)
    assert {p.name for p in out.iterdir()} >= {
        "cfg.json",
        "sae_weights.safetensors",
        "trustlab_sae.json",
        "result.json",
        "sae_fit.png",
    }
    saved = load_sae(out)
    # the library call with the same arguments gives the same SAE
    torch.set_num_threads(1)
    lm = load_model(tiny_folder)
    rows = sae_activations(lm, TEXTS, 1)
    own = SparseAutoencoder(
        n_latents=64, k=4, max_epochs=2, batch_size=32, random_state=3
    ).fit(rows, model_name=str(tiny_folder), layer=1)  # fmt: skip
    assert np.allclose(saved.W_dec_, own.W_dec_, atol=1e-5)
    assert saved.fit_.fvu == pytest.approx(own.fit_.fvu, rel=1e-4)
    assert (saved.model_name_, saved.layer_) == (str(tiny_folder), 1)  # as given to --model
    assert json.loads((out / "cfg.json").read_text())["metadata"]["hook_name"] == (
        "blocks.1.hook_resid_post"
    )
    # a second run into the same folder is refused without --overwrite
    code, _, err = run_main([*args, *SETTINGS, "--out", out], capsys)
    assert code == 2 and "--overwrite" in one_line(err)


@pytest.mark.parametrize(
    "extra, option",
    [
        (["--k", 100], "--k"),
        (["--activation", "gelu"], "--activation"),
        (["--max-epochs", 0], "--max-epochs"),
        (["--max-texts", 0], "--max-texts"),
    ],
)
def test_bad_options_are_one_line(tmp_path, capsys, tiny_folder, extra, option):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    args = ["interpret", "sae", "train", "--model", tiny_folder, "--texts", texts]
    code, _, err = run_main(
        [*args, "--layer", 1, *SETTINGS, *extra, "--out", tmp_path / "o"], capsys
    )
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {option}"), err


def test_bad_layer_and_texts_are_one_line(tmp_path, capsys, tiny_folder):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    base = ["interpret", "sae", "train", "--model", tiny_folder, "--out", tmp_path / "o"]
    code, _, err = run_main([*base, "--layer", 5], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --layer"), err
    code, _, err = run_main([*base, "--layer", 1, "--texts", empty], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --texts"), err


def test_max_texts_trains_on_the_first_texts(tmp_path, capsys, tiny_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    args = ["interpret", "sae", "train", "--model", tiny_folder, "--layer", 0, "--texts", texts]
    code, stdout, err = run_main(
        [*args, *SETTINGS, "--max-texts", 2, "--out", tmp_path / "o", "--json"], capsys
    )
    assert code == 0, err
    lm = load_model(tiny_folder)
    assert json.loads(stdout)["n_rows"] == len(sae_activations(lm, TEXTS[:2], 0))


def test_cache_saves_the_library_cache_and_resumes(tmp_path, capsys, tiny_folder):
    from trustlab.interpret import cache_latents, load_latent_cache

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir = tmp_path / "sae"
    train = ["interpret", "sae", "train", "--model", tiny_folder, "--layer", 1, "--texts", texts]
    assert run_main([*train, *SETTINGS, "--out", sae_dir], capsys)[0] == 0
    out = tmp_path / "cache"
    args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts, "--out", out]
    code, stdout, err = run_main([*args, "--batch-size", 3, "--json"], capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    saved = load_latent_cache(out)
    own = cache_latents(load_model(tiny_folder), load_sae(sae_dir), TEXTS, batch_size=3)
    assert summary == own.to_dict() == saved.to_dict()
    assert np.array_equal(saved.contexts, own.contexts)
    assert np.allclose(saved.activations, own.activations, atol=1e-6)
    # an interrupted run (no result yet) resumes from its chunks; a finished one is refused
    for name in ("result.json", "latent_cache.json", "latent_cache.npz", "latent_firing.png"):
        (out / name).unlink()
    (out / "chunks" / "chunk_000000.npz").stat()  # the finished chunk is there to resume from
    assert run_main([*args, "--batch-size", 3], capsys)[0] == 0
    assert load_latent_cache(out).to_dict() == own.to_dict()
    code, _, err = run_main(args, capsys)
    assert code == 2 and "--overwrite" in one_line(err)
    code, _, err = run_main([*args[:4], tmp_path, *args[5:], "--overwrite"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --sae"), err


class _Canned:
    """An explainer double: answers with the marker and a fixed text."""

    name = "canned"

    def __init__(self):
        self.prompts = []

    def generate(self, prompts, max_new_tokens=64, **kwargs):
        self.prompts.extend(prompts)
        return ["thinking... [EXPLANATION]: short words" for _ in prompts]


def test_explain_writes_one_line_per_latent_and_resumes(tmp_path, capsys, tiny_folder, monkeypatch):
    import trustlab.llm as llm
    from trustlab.interpret import latent_examples, load_latent_cache, template_explanation

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir, cache_dir, out = tmp_path / "sae", tmp_path / "cache", tmp_path / "expl"
    train = ["interpret", "sae", "train", "--model", tiny_folder, "--layer", 1, "--texts", texts]
    assert run_main([*train, *SETTINGS, "--out", sae_dir], capsys)[0] == 0
    cache_args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts]
    assert run_main([*cache_args, "--out", cache_dir], capsys)[0] == 0
    cache = load_latent_cache(cache_dir)
    busiest = [int(i) for i in np.argsort(-cache.firing_counts)[:3]]
    base = ["interpret", "sae", "explain", "--cache", cache_dir, "--subject", tiny_folder]
    latents = ",".join(map(str, busiest))
    code, stdout, err = run_main(
        [*base, "--explainer", "template", "--latents", latents, "--n-train", 5, "--out", out,
         "--json"], capsys,
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(stdout)["n_latents"] == 3
    rows = [json.loads(line) for line in (out / "explanations.jsonl").read_text().splitlines()]
    assert [r["latent"] for r in rows] == busiest
    tokenizer = load_model(tiny_folder).tokenizer
    for r in rows:
        examples = latent_examples(cache, r["latent"], n_train=5, min_examples=200,
                                   random_state=r["latent"])  # fmt: skip
        own = template_explanation(examples, lambda t: tokenizer.decode([t]))
        assert r["text"] == own.text and r["explainer"] == "template"
    # a model explainer, drawn latents: the store answers a rerun without asking the model again
    canned = _Canned()
    real_load = llm.load_model
    monkeypatch.setattr(
        llm, "load_model", lambda name: canned if name == "canned" else real_load(name)
    )
    args = [*base, "--explainer", "canned", "--max-latents", 2, "--min-examples", 1,
            "--n-train", 4, "--out", tmp_path / "e2"]  # fmt: skip
    assert run_main(args, capsys)[0] == 0
    asked = len(canned.prompts)
    assert asked == 2
    assert run_main([*args, "--overwrite"], capsys)[0] == 0
    assert len(canned.prompts) == asked  # resumed from explanations.sqlite
    rows = [
        json.loads(x) for x in (tmp_path / "e2" / "explanations.jsonl").read_text().splitlines()
    ]
    assert all(r["text"] == "short words" and r["marker_found"] for r in rows)
    code, _, err = run_main([*base, "--explainer", "template", "--latents", "5-x", "--out",
                             tmp_path / "e3"], capsys)  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --latents"), err


class _Judge:
    """A scorer double: answers 1 for excerpts with an even number of characters."""

    name = "judge"

    def __init__(self):
        self.calls = 0

    def generate(self, prompts, max_new_tokens=64, **kwargs):
        import re

        self.calls += 1
        tail = prompts[0][prompts[0].rfind("Feature:") :]
        texts = re.findall(r"^Excerpt \d+: (.*)$", tail, flags=re.M)
        return [str([int(len(t) % 2 == 0) for t in texts])]


def test_score_writes_true_and_shuffled_rows_and_resumes(
    tmp_path, capsys, tiny_folder, monkeypatch
):
    import trustlab.llm as llm
    from trustlab.interpret import detection_score, latent_examples, load_latent_cache, pydoc_texts

    texts = tmp_path / "texts.txt"  # long enough for 10 test examples of the busiest latents
    texts.write_text("\n".join(pydoc_texts(600)[:60]), encoding="utf-8")
    sae_dir, cache_dir, expl = tmp_path / "sae", tmp_path / "cache", tmp_path / "expl"
    train = ["interpret", "sae", "train", "--model", tiny_folder, "--layer", 1, "--texts", texts]
    assert run_main([*train, *SETTINGS, "--out", sae_dir], capsys)[0] == 0
    cache_args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts]
    assert run_main([*cache_args, "--out", cache_dir], capsys)[0] == 0
    explain = ["interpret", "sae", "explain", "--cache", cache_dir, "--subject", tiny_folder,
               "--explainer", "template", "--max-latents", 3, "--min-examples", 40,
               "--n-train", 4, "--out", expl]  # fmt: skip
    assert run_main(explain, capsys)[0] == 0
    judge = _Judge()
    real_load = llm.load_model
    monkeypatch.setattr(
        llm, "load_model", lambda name: judge if name == "judge" else real_load(name)
    )
    args = ["interpret", "sae", "score", "--explanations", expl, "--scorer", "judge",
            "--methods", "detection", "--answer", "list", "--n-test", 10, "--n-not-active", 10,
            "--out", tmp_path / "scores", "--json"]  # fmt: skip
    code, stdout, err = run_main(args, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["methods"] == ["detection"] and set(summary["means"]) == {"true", "shuffled"}
    rows = [json.loads(x) for x in (tmp_path / "scores" / "scores.jsonl").read_text().splitlines()]
    explained = {
        json.loads(x)["latent"]: json.loads(x)["text"]
        for x in (expl / "explanations.jsonl").read_text().splitlines()
    }
    assert len(rows) == 2 * len(explained)
    assert all(row["detection"] is not None for row in rows)
    cache = load_latent_cache(cache_dir)
    tokenizer = load_model(tiny_folder).tokenizer
    for row in rows:
        examples = latent_examples(cache, row["latent"], n_train=4, n_test=50, n_not_active=10,
                                   min_examples=40, random_state=row["latent"])  # fmt: skip
        keep = np.random.default_rng(row["latent"]).choice(len(examples.test), 10, replace=False)
        shown = tuple(examples.test[i] for i in sorted(keep))
        # never an example the explainer saw
        seen = {(e.context, e.start) for e in examples.train}
        assert not seen & {(e.context, e.start) for e in shown}
        examples = dataclasses.replace(examples, test=shown)
        own = detection_score(examples, row["explanation"], _Judge(),
                              lambda t: tokenizer.decode([t]))  # fmt: skip
        got = np.nan if row["detection"] is None else row["detection"]  # JSON null is NaN
        assert got == pytest.approx(own.balanced_accuracy, nan_ok=True)
        assert (row["explanation"] == explained[row["latent"]]) != row["shuffled"]
    calls = judge.calls
    assert run_main([*args, "--overwrite"], capsys)[0] == 0
    assert judge.calls == calls  # resumed from scores.sqlite
    bad = ["interpret", "sae", "score", "--explanations", expl, "--methods", "simulation",
           "--out", tmp_path / "s2"]  # fmt: skip
    code, _, err = run_main(bad, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --methods"), err
