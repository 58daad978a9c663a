"""``trustlab interpret sae train``: the command trains the library's SAE and saves it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from cli_helpers import one_line, run_main
from sae_cli_data import SETTINGS, TEXTS, train_args
from trustlab.cli.interpret import _test_subset
from trustlab.interpret import SparseAutoencoder, load_sae, sae_activations
from trustlab.llm import load_model


def test_train_saves_the_library_sae(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n\n", encoding="utf-8")
    out = tmp_path / "sae"
    args = train_args(tiny_llama_folder, texts)
    code, stdout, err = run_main([*args, *SETTINGS, "--out", out, "--json"], capsys)
    assert code == 0, err
    fit = json.loads(stdout)
    assert (fit["d_in"], fit["n_latents"], fit["k"], fit["epochs_run"]) == (48, 64, 4, 2)
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
    lm = load_model(tiny_llama_folder)
    rows = sae_activations(lm, TEXTS, 1)
    own = SparseAutoencoder(
        n_latents=64, k=4, max_epochs=2, batch_size=32, random_state=3
    ).fit(rows, model_name=str(tiny_llama_folder), layer=1)  # fmt: skip
    assert np.allclose(saved.W_dec_, own.W_dec_, atol=1e-5)
    assert saved.fit_.fvu == pytest.approx(own.fit_.fvu, rel=1e-4)
    assert (saved.model_name_, saved.layer_) == (str(tiny_llama_folder), 1)  # as given to --model
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
def test_bad_options_are_one_line(tmp_path, capsys, tiny_llama_folder, extra, option):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    args = ["interpret", "sae", "train", "--model", tiny_llama_folder, "--texts", texts]
    # an option is given once (a repeated one is refused as such): extra replaces the setting
    pairs = [SETTINGS[i : i + 2] for i in range(0, len(SETTINGS), 2) if SETTINGS[i] != option]
    settings = [x for pair in pairs for x in pair]
    code, _, err = run_main(
        [*args, "--layer", 1, *settings, *extra, "--out", tmp_path / "o"], capsys
    )
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {option}"), err


@pytest.mark.parametrize(
    "extra, option",
    [(["--k", 0], "--k"), (["--activation", "gelu"], "--activation"),
     (["--learning-rate", -1], "--learning-rate"), (["--n-latents", 1], "--n-latents")],
)  # fmt: skip
def test_bad_sae_options_are_refused_before_the_model_loads(
    tmp_path, capsys, monkeypatch, extra, option
):
    """They were checked by fit, after the model loaded and every activation was read."""
    import trustlab.llm as llm

    def no_loading(*args, **kwargs):
        raise AssertionError("the model loaded before the options were checked")

    monkeypatch.setattr(llm, "load_model", no_loading)
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    args = ["interpret", "sae", "train", "--model", "m", "--texts", texts, "--layer", 1]
    code, _, err = run_main([*args, *extra, "--out", tmp_path / "o"], capsys)
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {option}"), err


def test_bad_layer_and_texts_are_one_line(tmp_path, capsys, tiny_llama_folder):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    base = ["interpret", "sae", "train", "--model", tiny_llama_folder, "--out", tmp_path / "o"]
    code, _, err = run_main([*base, "--layer", 5], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --layer"), err
    code, _, err = run_main([*base, "--layer", 1, "--texts", empty], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --texts"), err


def test_max_texts_trains_on_the_first_texts(tmp_path, capsys, tiny_llama_folder):
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    args = train_args(tiny_llama_folder, texts, 0)
    code, stdout, err = run_main(
        [*args, *SETTINGS, "--max-texts", 2, "--out", tmp_path / "o", "--json"], capsys
    )
    assert code == 0, err
    lm = load_model(tiny_llama_folder)
    assert json.loads(stdout)["n_rows"] == len(sae_activations(lm, TEXTS[:2], 0))


def test_cache_saves_the_library_cache_and_resumes(tmp_path, capsys, tiny_llama_folder):
    from trustlab.interpret import cache_latents, load_latent_cache

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir = tmp_path / "sae"
    train = train_args(tiny_llama_folder, texts)
    assert run_main([*train, *SETTINGS, "--out", sae_dir], capsys)[0] == 0
    out = tmp_path / "cache"
    args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts, "--out", out]
    code, stdout, err = run_main([*args, "--batch-size", 3, "--json"], capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    saved = load_latent_cache(out)
    own = cache_latents(load_model(tiny_llama_folder), load_sae(sae_dir), TEXTS, batch_size=3)
    # the command records the model folder by its path, for the steps that load it again
    own = dataclasses.replace(own, model=str(tiny_llama_folder.resolve()))
    assert summary == own.to_dict() == saved.to_dict()
    assert np.array_equal(saved.contexts, own.contexts)
    assert np.allclose(saved.activations, own.activations, atol=1e-6)
    # an interrupted run (no result yet) resumes from its chunks; a finished one is refused
    for name in ("result.json", "latent_cache.json", "latent_cache.npz", "latent_firing.png"):
        (out / name).unlink()
    (out / "chunks" / "chunk_000000.npz").stat()  # the finished chunk is there to resume from
    code, _, err = run_main([*args, "--batch-size", 3], capsys)
    assert code == 0 and f"resuming from 1 finished chunk in {out / 'chunks'}" in err, err
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
        self.stop_at = None  # Ctrl-C once this many prompts were answered

    def generate(self, prompts, max_new_tokens=64, **kwargs):
        if self.stop_at is not None and len(self.prompts) >= self.stop_at:
            raise KeyboardInterrupt
        self.prompts.extend(prompts)
        return ["thinking... [EXPLANATION]: short words" for _ in prompts]


def test_explain_writes_one_line_per_latent_and_resumes(
    tmp_path, capsys, tiny_llama_folder, monkeypatch
):
    import trustlab.llm as llm
    from trustlab.interpret import latent_examples, load_latent_cache, template_explanation

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS), encoding="utf-8")
    sae_dir, cache_dir, out = tmp_path / "sae", tmp_path / "cache", tmp_path / "expl"
    train = train_args(tiny_llama_folder, texts)
    assert run_main([*train, *SETTINGS, "--out", sae_dir], capsys)[0] == 0
    cache_args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts]
    assert run_main([*cache_args, "--out", cache_dir], capsys)[0] == 0
    cache = load_latent_cache(cache_dir)
    busiest = [int(i) for i in np.argsort(-cache.firing_counts)[:3]]
    base = ["interpret", "sae", "explain", "--cache", cache_dir, "--subject", tiny_llama_folder]
    latents = ",".join(map(str, busiest))
    code, stdout, err = run_main(
        [*base, "--explainer", "template", "--latents", latents, "--n-train", 5, "--out", out,
         "--json"], capsys,
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(stdout)["n_latents"] == 3
    rows = [json.loads(line) for line in (out / "explanations.jsonl").read_text().splitlines()]
    assert [r["latent"] for r in rows] == busiest
    tokenizer = load_model(tiny_llama_folder).tokenizer
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
    canned.stop_at = 1  # Ctrl-C after the first latent: the rerun says it resumes, and from what
    code, _, err = run_main(args, capsys)
    assert code == 130 and err.splitlines()[-1] == "trustlab: interrupted", err
    canned.stop_at = None
    code, _, err = run_main(args, capsys)
    assert (
        code == 0
        and f"resuming from {tmp_path / 'e2' / 'explanations.sqlite'}: 1 of 2 latents done" in err
    ), err
    asked = len(canned.prompts)
    assert asked == 2
    for name in ("explanations.jsonl", "result.json"):  # as if stopped before writing them
        (tmp_path / "e2" / name).unlink()
    code, _, err = run_main(args, capsys)
    assert code == 0 and ": 2 of 2 latents done" in err, err
    assert len(canned.prompts) == asked  # resumed from explanations.sqlite
    # another input (here the answer length) decides other rows: nothing of the run is reused
    for name in ("explanations.jsonl", "result.json"):
        (tmp_path / "e2" / name).unlink()
    code, _, err = run_main([*args, "--max-new-tokens", 32], capsys)
    assert code == 0 and "resuming" not in err, err
    assert len(canned.prompts) == 2 * asked
    # --overwrite starts afresh, stored rows included
    assert run_main([*args, "--overwrite"], capsys)[0] == 0
    assert len(canned.prompts) == 3 * asked
    rows = [
        json.loads(x) for x in (tmp_path / "e2" / "explanations.jsonl").read_text().splitlines()
    ]
    assert all(r["text"] == "short words" and r["marker_found"] for r in rows)
    code, _, err = run_main([*base, "--explainer", "template", "--latents", "5-x", "--out",
                             tmp_path / "e3"], capsys)  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --latents"), err


def _explained(tmp_path, capsys, tiny_llama_folder, max_latents):
    """``train``, ``cache`` and template ``explain`` through the CLI on 60 pydoc texts (long
    enough for 10 test examples of the busiest latents): the three folders."""
    from trustlab.interpret import pydoc_texts

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(pydoc_texts(600)[:60]), encoding="utf-8")
    sae_dir, cache_dir, expl = tmp_path / "sae", tmp_path / "cache", tmp_path / "expl"
    train = train_args(tiny_llama_folder, texts)
    assert run_main([*train, *SETTINGS, "--out", sae_dir], capsys)[0] == 0
    cache_args = ["interpret", "sae", "cache", "--sae", sae_dir, "--texts", texts]
    assert run_main([*cache_args, "--out", cache_dir], capsys)[0] == 0
    explain = ["interpret", "sae", "explain", "--cache", cache_dir, "--subject", tiny_llama_folder,
               "--explainer", "template", "--max-latents", max_latents, "--min-examples", 40,
               "--n-train", 4, "--out", expl]  # fmt: skip
    assert run_main(explain, capsys)[0] == 0
    return sae_dir, cache_dir, expl


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
    tmp_path, capsys, tiny_llama_folder, monkeypatch
):
    import trustlab.llm as llm
    from trustlab.interpret import detection_score, latent_examples, load_latent_cache

    sae_dir, cache_dir, expl = _explained(tmp_path, capsys, tiny_llama_folder, 3)
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
    tokenizer = load_model(tiny_llama_folder).tokenizer
    for row in rows:
        examples = latent_examples(cache, row["latent"], n_train=4, n_test=50, n_not_active=10,
                                   min_examples=40, random_state=row["latent"])  # fmt: skip
        shown = _test_subset(examples.test, 10, row["latent"])  # as even over quantiles as can be
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
    for name in ("scores.jsonl", "result.json"):  # as if stopped before writing them
        (tmp_path / "scores" / name).unlink()
    code, _, err = run_main(args, capsys)
    assert code == 0 and f"resuming from {tmp_path / 'scores' / 'scores.sqlite'}: " in err, err
    assert judge.calls == calls  # resumed from scores.sqlite
    # explanations written anew are another input: their rows are scored again
    explain = ["interpret", "sae", "explain", "--cache", cache_dir, "--subject", tiny_llama_folder,
               "--explainer", "template", "--max-latents", 3, "--min-examples", 40,
               "--n-train", 4, "--out", expl, "--overwrite"]  # fmt: skip
    assert run_main(explain, capsys)[0] == 0
    for name in ("scores.jsonl", "result.json"):
        (tmp_path / "scores" / name).unlink()
    assert run_main(args, capsys)[0] == 0
    assert judge.calls == 2 * calls
    # --overwrite starts afresh, stored rows included
    assert run_main([*args, "--overwrite"], capsys)[0] == 0
    assert judge.calls == 3 * calls
    bad = ["interpret", "sae", "score", "--explanations", expl, "--methods", "simulation",
           "--out", tmp_path / "s2"]  # fmt: skip
    code, _, err = run_main(bad, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --methods"), err


def test_report_writes_the_page_of_a_scored_run(tmp_path, capsys, tiny_llama_folder, monkeypatch):
    import html as html_lib

    from scipy.stats import spearmanr

    import trustlab.llm as llm
    from trustlab.interpret import detection_score, latent_examples, load_latent_cache

    sae_dir, cache_dir, expl = _explained(tmp_path, capsys, tiny_llama_folder, 4)
    real_load = llm.load_model
    monkeypatch.setattr(
        llm, "load_model", lambda name: _Judge() if name == "judge" else real_load(name)
    )
    scores = tmp_path / "scores"
    args = ["interpret", "sae", "score", "--explanations", expl, "--scorer", "judge",
            "--methods", "detection,fuzzing", "--answer", "list", "--n-test", 10,
            "--n-not-active", 10, "--out", scores]  # fmt: skip
    assert run_main(args, capsys)[0] == 0
    score_means = json.loads((scores / "result.json").read_text())["means"]
    rows = [json.loads(x) for x in (scores / "scores.jsonl").read_text().splitlines()]

    out = tmp_path / "report"
    report = ["interpret", "sae", "report", "--scores", scores, "--out", out, "--best", 1]
    code, stdout, err = run_main([*report, "--json"], capsys)
    assert code == 0, err
    result = json.loads(stdout)
    latents = sorted({r["latent"] for r in rows})
    assert result["n_latents"] == len(latents) >= 3
    assert result["methods"] == ["detection", "fuzzing"]
    # the means are those `sae score` computed
    for method in ("detection", "fuzzing"):
        for kind in ("true", "shuffled"):
            assert result["means"][method][kind] == pytest.approx(score_means[kind][method])
    # Spearman across latents, as scipy computes it on scores.jsonl
    true = {r["latent"]: r for r in rows if not r["shuffled"]}
    nan = float("nan")
    x = np.array([nan if true[i]["detection"] is None else true[i]["detection"] for i in latents])
    y = np.array([nan if true[i]["fuzzing"] is None else true[i]["fuzzing"] for i in latents])
    keep = np.isfinite(x) & np.isfinite(y)
    (c,) = result["correlations"]
    assert c["n"] == keep.sum()
    assert keep.sum() >= 3 and np.ptp(x[keep]) > 0 and np.ptp(y[keep]) > 0
    assert c["rho"] == pytest.approx(spearmanr(x[keep], y[keep]).statistic)
    # each latent's interval and answers by quantile: the scorer's, recomputed here
    cache = load_latent_cache(cache_dir)
    tokenizer = load_model(tiny_llama_folder).tokenizer
    by_latent = {r["latent"]: r for r in result["latents"]}
    for row in rows:
        examples = latent_examples(cache, row["latent"], n_train=4, n_test=50, n_not_active=10,
                                   min_examples=40, random_state=row["latent"])  # fmt: skip
        examples = dataclasses.replace(
            examples, test=_test_subset(examples.test, 10, row["latent"])
        )
        own = detection_score(examples, row["explanation"], _Judge(),
                              lambda t: tokenizer.decode([t]))  # fmt: skip
        shown = by_latent[row["latent"]]["scores"]["detection"]
        interval = shown["shuffled_interval" if row["shuffled"] else "interval"]
        expected = [None if np.isnan(v) else pytest.approx(v) for v in own.interval]
        assert interval == expected
        assert row["detection_examples"]["quantiles"] == own.quantiles.tolist()
        assert row["detection_examples"]["predicted"] == own.predicted.astype(int).tolist()
    assert set(result["by_quantile"]) == {"detection", "fuzzing"}
    # the page: the best and the worst latent with their explanations and contexts
    page = (out / "report.html").read_text(encoding="utf-8")
    data = json.loads((out / "report.json").read_text())
    sections = {s["id"]: s for s in data["sections"]}
    (best,) = sections["best"]["data"]["latents"]
    (worst,) = sections["worst"]["data"]["latents"]
    assert (best, worst) == (result["best"][0], result["worst"][0])
    assert true[best]["explanation"] in html_lib.unescape(page)
    contexts = sections["best"]["data"]["contexts"][str(best)]
    assert contexts and all(len(c["tokens"]) == len(c["activations"]) for c in contexts)
    assert page.count('<span class="tokens"') == len(contexts) + len(
        sections["worst"]["data"]["contexts"][str(worst)]
    )
    assert "http://" not in page and "https://" not in page
    # a rerun is refused without --overwrite; an unknown method is named
    code, _, err = run_main(report, capsys)
    assert code == 2 and "--overwrite" in one_line(err)
    code, _, err = run_main([*report, "--overwrite", "--method", "surprisal"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --method"), err
    # scores written before `score` recorded its explanations: --explanations names them
    info = json.loads((scores / "result.json").read_text())
    del info["explanations"]
    (scores / "result.json").write_text(json.dumps(info))
    code, _, err = run_main([*report, "--overwrite"], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --explanations"), err
    code, _, err = run_main([*report, "--overwrite", "--explanations", expl], capsys)
    assert code == 0, err


def test_corpus_writes_the_cached_texts_and_their_manifest(tmp_path, capsys, monkeypatch):
    """``sae corpus``: corpus.txt is what ``--texts`` reads, the manifest vouches for it
    (hashlib), the budget holds (4 characters a token), and it equals the library's corpus."""
    import hashlib

    from trustlab.cli._common import text_lines
    from trustlab.interpret import book_texts, offline_corpus, pydoc_texts

    monkeypatch.setenv("TRUSTLAB_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "corpus"
    sources = ["--sources", "books,pydoc"]
    args = ["interpret", "sae", "corpus", "--out", out, "--tokens", 20_000, "--seed", 3, *sources]
    code, stdout, err = run_main([*args, "--json"], capsys)
    assert code == 0, err
    manifest = json.loads(stdout)
    assert manifest == json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    body = (out / "corpus.txt").read_bytes()
    assert hashlib.sha256(body).hexdigest() == manifest["sha256"]
    lines = text_lines(out / "corpus.txt", "--texts")
    assert lines == body.decode("utf-8").splitlines() and len(lines) == manifest["n_texts"]
    assert abs(sum(map(len, lines)) / 4 - 20_000) <= 2 * 125  # half a longest text a source
    assert set(lines) <= set(pydoc_texts()) | set(book_texts())
    assert [s["name"] for s in manifest["sources"]] == ["books", "pydoc"]
    assert manifest["random_state"] == 3
    library = offline_corpus(
        20_000, random_state=3, sources=["books", "pydoc"], cache_dir=tmp_path / "cache"
    )
    assert lines == library
    # a rerun is refused without --overwrite; with it, a summary per source
    code, _, err = run_main(args, capsys)
    assert code == 2 and "--overwrite" in one_line(err)
    code, stdout, err = run_main([*args, "--overwrite"], capsys)
    assert code == 0, err
    assert stdout.startswith("books: ") and f"wrote {len(lines):,} texts" in stdout


@pytest.mark.parametrize(
    "extra, option",
    [
        (["--tokens", 0], "--tokens"),
        (["--seed", -1], "--seed"),
        (["--sources", "pydoc,wikipedia"], "--sources"),
    ],
)
def test_corpus_bad_options_are_one_line(tmp_path, capsys, monkeypatch, extra, option):
    monkeypatch.setenv("TRUSTLAB_CACHE", str(tmp_path / "cache"))
    args = ["interpret", "sae", "corpus", "--out", tmp_path / "o", *extra]
    code, _, err = run_main(args, capsys)
    assert code == 2 and one_line(err).startswith(f"trustlab: error: {option}"), err
    assert not (tmp_path / "o").exists()


def test_score_adds_intervention_scores_with_the_sae(tmp_path, capsys, tiny_llama_folder):
    """``--methods intervention`` equals the library's calibration and intervention score on
    the same prompts (the latent's held-out examples cut after their first firing token)."""
    from trustlab.interpret import (
        calibrate_strength,
        intervention_kl,
        intervention_prompts,
        intervention_score,
        latent_examples,
        load_latent_cache,
    )

    sae_dir, cache_dir, expl = _explained(tmp_path, capsys, tiny_llama_folder, 2)
    args = ["interpret", "sae", "score", "--explanations", expl, "--scorer", tiny_llama_folder,
            "--methods", "intervention", "--n-test", 6, "--n-prompts", 3,
            "--out", tmp_path / "scores"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --sae"), err
    code, _, err = run_main([*args, "--sae", sae_dir], capsys)
    assert code == 0, err
    rows = [json.loads(x) for x in (tmp_path / "scores" / "scores.jsonl").read_text().splitlines()]
    # the latents whose strength did not calibrate: only the text summary said so, not --json
    summary = json.loads((tmp_path / "scores" / "result.json").read_text())
    off = sorted({r["latent"] for r in rows if r["intervention_calibrated"] is False})
    assert off and summary["intervention_uncalibrated"] == off
    cache, sae = load_latent_cache(cache_dir), load_sae(sae_dir)
    lm = load_model(tiny_llama_folder)
    for row in rows:
        examples = latent_examples(cache, row["latent"], n_train=4, n_test=50, n_not_active=50,
                                   min_examples=40, random_state=row["latent"])  # fmt: skip
        examples = dataclasses.replace(examples, test=_test_subset(examples.test, 6, row["latent"]))
        prompts = intervention_prompts(examples, lambda t: lm.tokenizer.decode([t]))[:3]
        found = calibrate_strength(
            lambda s, i=row["latent"], p=prompts: intervention_kl(lm, sae, i, p, s)
        )
        assert row["intervention_strength"] == pytest.approx(found.strength, rel=1e-9)
        # whether the strength reached the target was dropped (10^4 and KL 0 looked calibrated)
        assert row["intervention_kl"] == pytest.approx(found.kl, rel=1e-9)
        assert row["intervention_calibrated"] is found.converged
        own = intervention_score(lm, sae, row["latent"], prompts, [row["explanation"]],
                                 found.strength, random_state=row["latent"])  # fmt: skip
        assert row["intervention"] == pytest.approx(own.score, abs=1e-6)
        low, high = row["intervention_interval"]
        assert (low + high) / 2 == pytest.approx(own.score, abs=1e-6)
    at = args.index("--n-prompts")  # given once, as 1
    bad = [
        *args[:at],
        *args[at + 2 : -2],
        "--sae",
        sae_dir,
        "--n-prompts",
        1,
        "--out",
        tmp_path / "s2",
    ]
    code, _, err = run_main(bad, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --n-prompts"), err


@pytest.mark.parametrize(("device", "says"), [("cuda:x", "expected"), ("cuda", "no GPU")])
def test_cache_device_is_checked_before_any_work(device, says, tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    args = ["interpret", "sae", "cache", "--sae", tmp_path / "no-sae", "--out", tmp_path / "c"]
    code, _, err = run_main([*args, "--device", device], capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --device:") and says in err
    assert not (tmp_path / "c").exists()
