"""Tests of trustlab.watermark.metrics.

Oracles: the authors' released per-item BLEU-1/ROUGE-L of WMarkGPT-7B on WQA-Real (check 1 of
spec 05; data in tests/data/wmarkgpt, Apache-2.0), nltk's ``sentence_bleu`` and the ``rouge``
package 1.0.1 on random texts, scipy's ``spearmanr``/``pearsonr``, and simple loops for the level
accuracies.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.watermark.metrics import (
    DescriptionScores,
    VisibilityScores,
    bleu1,
    clean_text,
    level_accuracy,
    parse_level,
    rouge_l,
    score_descriptions,
    score_visibility,
    srcc_plcc,
)
from trustlab.watermark.vocabulary import LEVELS

DATA = Path(__file__).resolve().parents[1] / "data" / "wmarkgpt"


def _load(name):
    with gzip.open(DATA / name, "rt", encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def real():
    """WQA-Real test references, WMarkGPT-7B answers and the authors' per-item scores, aligned."""
    d = _load("wqa_real_wmarkgpt7b.json.gz")
    answers = {a["image"]: a for a in d["answers"]}
    names = [r["image"] for r in d["references"]]
    assert set(names) == set(answers) == set(d["results"]) and len(names) == 500
    return {
        "refs": [r["text"] for r in d["references"]],
        "levels": [r["visibility"] for r in d["references"]],
        "answers": [answers[n]["text"] for n in names],
        "answer_levels": [answers[n]["visibility"] for n in names],
        "bleu1": np.array([d["results"][n]["BLEU_1"] for n in names]),
        "rouge_l": np.array([d["results"][n]["ROUGE_L"] for n in names]),
    }


# ------------------------------------------------------------------ check 1: released outputs


def test_per_item_bleu1_and_rouge_l_equal_the_released_values(real):
    refs = [clean_text(t, compat=True) for t in real["refs"]]
    answers = [clean_text(t, compat=True) for t in real["answers"]]
    np.testing.assert_allclose(bleu1(refs, answers), real["bleu1"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(rouge_l(refs, answers), real["rouge_l"], rtol=0, atol=1e-9)
    res = score_descriptions(real["refs"], real["answers"], compat=True)
    np.testing.assert_allclose(res.bleu1, real["bleu1"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.rouge_l, real["rouge_l"], rtol=0, atol=1e-9)
    assert res.bleu1_mean == pytest.approx(real["bleu1"].mean(), abs=1e-12)


def test_default_cleaning_removes_only_the_end_token(real):
    # the authors' strip leaves "</" of "</s>", which then counts as part of the last word
    ends = [t for t in real["answers"] if t.endswith("</s>")]
    assert len(ends) > 400
    assert all(clean_text(t, compat=True).endswith(".</") for t in ends)
    assert all(clean_text(t) == t[: -len("</s>")].rstrip() for t in ends)
    fixed = score_descriptions(real["refs"], real["answers"])
    assert (
        fixed.bleu1_mean > score_descriptions(real["refs"], real["answers"], compat=True).bleu1_mean
    )
    # character-set strip versus token removal on texts that begin or end with "s"
    assert clean_text("sunny fields", compat=True) == "unny field"
    assert clean_text("sunny fields</s>") == "sunny fields"
    assert clean_text("  <s> text</s></s> ") == "text"


def test_level_accuracies_equal_simple_loops(real):
    levels, texts, extracted = real["levels"], real["answers"], real["answer_levels"]
    # the authors' ACC: the reference word as a substring of the GPT-extracted level word
    authors = sum(lv in ex for lv, ex in zip(levels, extracted, strict=True)) / len(levels)
    assert level_accuracy(extracted, levels, mode="substring") == pytest.approx(authors, abs=1e-15)
    exact_words = sum(ex.strip().lower() == lv for lv, ex in zip(levels, extracted, strict=True))
    assert level_accuracy(extracted, levels) == pytest.approx(exact_words / 500, abs=1e-15)
    # exact parse of the paragraphs: they end with the fixed sentence (then "</s>")
    hits = 0
    for lv, text in zip(levels, texts, strict=True):
        t = text[:-4] if text.endswith("</s>") else text
        hits += t.rstrip().endswith(f"The watermark visibility is: {lv}.")
    res = score_descriptions(real["refs"], texts, reference_levels=levels)
    assert res.accuracy_exact == pytest.approx(hits / 500, abs=1e-15)
    assert res.accuracy == res.accuracy_exact
    sub = 0
    for lv, text in zip(levels, texts, strict=True):
        sub += lv in text[text.rfind("visibility is") :]  # every answer but one has the phrase
    assert res.accuracy_substring == pytest.approx(sub / 500, abs=1e-15)
    assert res.accuracy_substring >= res.accuracy_exact
    # "visible" is found inside "invisible": the substring mode is looser on this data
    assert authors > exact_words / 500


def _qscores(name):
    q = _load(name)
    if name == "qscore_real.json.gz":
        return [v["predict_score"] for v in q.values()], [v["gt_score"] for v in q.values()], q
    return [v[1] for v in q.values()], [v[0] for v in q.values()], q


@pytest.mark.parametrize("name", ["qscore_real.json.gz", "qscore_synthetic.json.gz"])
def test_srcc_plcc_of_released_scores_equal_scipy(name):
    from scipy.stats import pearsonr, spearmanr

    pred, gt, _ = _qscores(name)
    srcc, plcc = srcc_plcc(pred, gt)
    # the repository states no SRCC/PLCC: the oracle is scipy on the same files, as the
    # authors' evaluate/iqa_eval.py computed them (spearmanr(gts, scores), pearsonr(gts, scores))
    assert srcc == pytest.approx(spearmanr(gt, pred)[0], abs=1e-12)
    assert plcc == pytest.approx(pearsonr(gt, pred)[0], abs=1e-12)
    res = score_visibility(pred, gt)
    assert (res.srcc, res.plcc, res.n) == (srcc, plcc, len(gt))


def test_released_scores_are_the_q_align_readout():
    from scipy.special import softmax

    from trustlab.watermark.vocabulary import score_of_level_probabilities

    _, _, q = _qscores("qscore_real.json.gz")
    logits = np.array([[v["logits"][w] for w in LEVELS] for v in q.values()])
    want = np.array([v["predict_score"] for v in q.values()])
    got = score_of_level_probabilities(softmax(logits, axis=1))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


# ------------------------------------------------------------------ peers on random texts

WORDS = ["a", "b", "the", "cat", "a.", "b,", "mark", "is:", "faint.", ".", "..", "s", "!", "x?"]
SPACES = [" ", " ", " ", "  ", "\n", "\t"]


@st.composite
def texts(draw, min_words=0):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=24))
    out = ""
    for w in words:
        out += w + draw(st.sampled_from(SPACES))
    return draw(st.sampled_from(["", " ", "."])) + out


def _has_sentence(text):
    return any(piece for piece in text.split("."))


@settings(max_examples=150, deadline=None)
@given(texts(), texts())
def test_bleu1_equals_nltk(ref, cand):
    from nltk.translate.bleu_score import sentence_bleu

    want = sentence_bleu([ref.split()], cand.split(), weights=(1,))
    assert bleu1(ref, cand) == pytest.approx(want, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(texts(min_words=1), texts(min_words=1))
def test_rouge_l_equals_rouge_package(ref, cand):
    from rouge import Rouge

    assume(_has_sentence(ref) and _has_sentence(cand))
    want = Rouge(metrics=["rouge-l"]).get_scores(cand, ref)[0]["rouge-l"]["f"]
    assert rouge_l(ref, cand) == pytest.approx(want, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(texts(), texts()), min_size=1, max_size=12))
def test_batched_scores_equal_one_by_one(pairs):
    refs, cands = [p[0] for p in pairs], [p[1] for p in pairs]
    np.testing.assert_array_equal(bleu1(refs, cands), [bleu1(r, c) for r, c in pairs])
    np.testing.assert_array_equal(rouge_l(refs, cands), [rouge_l(r, c) for r, c in pairs])


def test_edge_cases_of_the_text_scores():
    assert bleu1("a b", "") == 0.0 and bleu1("", "a") == 0.0
    # the package raises on texts with no sentence; ours gives 0
    assert rouge_l("...", "a b") == 0.0 and rouge_l("a b", "") == 0.0
    assert rouge_l("a b c", "a b c") == pytest.approx(1.0, abs=1e-7)
    # a long single sentence (one table larger than a chunk of short ones) against the package
    from rouge import Rouge

    rng = np.random.default_rng(3)
    ref = " ".join(rng.choice(["a", "b", "c", "d", "e"], 300))
    cand = " ".join(rng.choice(["a", "b", "c", "f"], 250)) + ". " + "c a b"
    want = Rouge(metrics=["rouge-l"]).get_scores(cand, ref)[0]["rouge-l"]["f"]
    assert rouge_l(ref, cand) == pytest.approx(want, abs=1e-12)


# ------------------------------------------------------------------ correlations


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.floats(-5, 5, allow_nan=False)), min_size=3, max_size=40
    )
)
def test_srcc_plcc_equal_scipy_with_ties(rows):
    from scipy.stats import pearsonr, spearmanr

    a = np.array([r[0] for r in rows], dtype=float)
    b = np.array([r[1] for r in rows])
    assume(np.ptp(a) > 0 and np.ptp(b) > 1e-6)
    srcc, plcc = srcc_plcc(a, b)
    assert srcc == pytest.approx(spearmanr(a, b)[0], abs=1e-12)
    assert plcc == pytest.approx(pearsonr(a, b)[0], abs=1e-10)
    # SRCC depends on ranks only
    assert srcc_plcc(np.exp(a), b)[0] == pytest.approx(srcc, abs=1e-12)


def test_constant_scores_give_nan():
    srcc, plcc = srcc_plcc([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert math.isnan(srcc) and math.isnan(plcc)


# ------------------------------------------------------------------ level parsing


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("A logo. The watermark visibility is: faint.", "faint"),
        ("A logo. The watermark visibility is: invisible.</s>", "invisible"),
        ("A logo.\nthe watermark visibility is:Visible", "visible"),
        ('A logo. " The watermark visibility is: obvious.', "obvious"),
        ("The watermark visibility is: moderate.", "moderate"),
        ("Faint.", "faint"),
        ("  obvious ", "obvious"),
        # not exact: no final sentence, a sentence after it, two words, markdown, glued sentence
        ("A logo that is visible.", None),
        ("The watermark visibility is: faint. It covers the dog.", None),
        ("The watermark visibility is: faint or moderate.", None),
        ("The watermark visibility is: **faint**.", None),
        ("A logo.The watermark visibility is: faint.", None),
        ("The watermark visibility is: invisibles.", None),
        ("", None),
    ],
)
def test_parse_level_exact(text, level):
    assert parse_level(text) == level


def test_parse_level_substring_is_membership():
    assert parse_level("invisible", mode="substring") == ("invisible", "visible")
    assert parse_level("A visible logo. The watermark visibility is: faint.", "substring") == (
        "faint",
    )
    assert parse_level("Obvious", mode="substring") == ()  # case-sensitive, as the authors'
    assert level_accuracy(["invisible"], ["visible"], mode="substring") == 1.0
    assert level_accuracy(["invisible"], ["visible"]) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.sampled_from(LEVELS))
def test_parse_level_reads_any_prefix_then_the_final_sentence(prefix, level):
    prefix = re.sub(r"[^a-z ,]", "", prefix.lower())
    text = f"{prefix}. The watermark visibility is: {level}.</s>"
    assert parse_level(text) == level
    assert level in parse_level(text, "substring")


# ------------------------------------------------------------------ results


def test_results_summary_dict_and_plots():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    refs = ["A faint logo. The watermark visibility is: faint.", "No mark. " * 3]
    answers = ["A faint logo. The watermark visibility is: moderate.", "No mark at all."]
    res = score_descriptions(refs, answers, reference_levels=["faint", "invisible"])
    assert isinstance(res, DescriptionScores)
    d = res.to_dict()
    assert d["n"] == 2 and d["accuracy_exact"] == 0.0 and "bleu1" not in d
    assert "BLEU-1" in res.summary() and "substring" in res.summary()
    assert res.parsed_levels == ("moderate", None)
    res.plot(ax=Figure().add_subplot())
    vis = score_visibility([4.9, 2.0, 3.1, 0.5], [4.5, 1.5, 3.0, 1.0])
    assert isinstance(vis, VisibilityScores) and set(vis.to_dict()) == {"srcc", "plcc", "n"}
    assert "SRCC" in vis.summary()
    vis.plot(ax=Figure().add_subplot())
    none = score_descriptions(refs, answers)
    assert none.accuracy_exact is None and none.accuracy is None


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: bleu1(1, "a"), "reference"),
        (lambda: bleu1(["a"], ["a", "b"]), "candidate"),
        (lambda: rouge_l("a", None), "candidate"),
        (lambda: rouge_l([], []), "reference"),
        (lambda: clean_text(None), "text"),
        (lambda: clean_text("a", compat="yes"), "compat"),
        (lambda: parse_level("a", mode="fuzzy"), "mode"),
        (lambda: parse_level(3), "text"),
        (lambda: level_accuracy(["a"], ["bogus"]), "reference_levels[0]"),
        (lambda: level_accuracy(["a", "b"], ["faint"]), "reference_levels"),
        (lambda: level_accuracy("a text", ["faint"]), "predicted_texts"),
        (lambda: srcc_plcc([1.0], [1.0]), "predicted_scores"),
        (lambda: srcc_plcc([1.0, 2.0], [1.0, float("nan")]), "gt_scores"),
        (lambda: srcc_plcc([1.0, 2.0], [1.0, 2.0, 3.0]), "gt_scores"),
        (lambda: srcc_plcc(["a", "b"], [1.0, 2.0]), "predicted_scores"),
        (lambda: score_descriptions(["a"], ["a", "b"]), "answers"),
        (lambda: score_descriptions(["a"], ["a"], mode="loose"), "mode"),
        (lambda: score_descriptions(["a"], ["a"], reference_levels=["x"]), "reference_levels"),
        (lambda: score_visibility([1.0, 2.0], "ab"), "gt_scores"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(InputError, match=re.escape(name)):
        call()
