"""The page of an SAE interpretation run.

Oracles: scipy's ``spearmanr`` (and, independently, Pearson's r of scipy's ranks) on score
vectors paired by latent here; scipy's percentile ``bootstrap`` of the mean; counts made by
hand and scipy's Mann-Whitney U for the scores by quantile; ``latent_examples`` called here for
the contexts, whose token backgrounds are read back from the HTML; a planted latent that fires
on digits (``digit_cache``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest
from scipy import stats
from test_sae_explain import VOCAB, decode, digit_cache

from trustlab.audit.sections.sae import activation_html, build_page, write_page
from trustlab.errors import InputError
from trustlab.interpret import ClassificationScore, RankingScore, latent_examples, sae_report

SAMPLING = {"ctx_len": 16, "n_train": 8, "n_test": 20, "min_examples": 1, "seed": 4}
SPAN = re.compile(
    r'<span title="([^"]*)"(?: style="background-color: rgba\(255, 136, 0, ([0-9.]+)\)")?>'
    r"(.*?)</span>"
)


def score_rows(seed=0, n=12, missing=()):
    """True and shuffled rows of ``n`` latents (indices 3, 6, ...) with random scores; the
    scores of ``missing`` (latent, method) pairs are None. Returns rows in a shuffled order
    and the scores by (latent, shuffled, method)."""
    rng = np.random.default_rng(seed)
    rows, truth = [], {}
    for latent in range(3, 3 * n + 3, 3):
        for shuffled in (False, True):
            row = {"latent": latent, "shuffled": shuffled, "explanation": f"x{latent}{shuffled}"}
            for method in ("detection", "embedding", "surprisal"):
                value = float(rng.random())
                if (latent, method) in missing and not shuffled:
                    value = None
                row[method] = value
                truth[latent, shuffled, method] = np.nan if value is None else value
            rows.append(row)
    order = rng.permutation(len(rows))
    return [rows[i] for i in order], truth


def test_spearman_equals_scipy_on_latents_paired_here():
    missing = {(6, "detection"), (9, "embedding"), (15, "surprisal")}
    rows, truth = score_rows(1, missing=missing)
    report = sae_report(rows)
    latents = sorted({lat for lat, _, _ in truth})
    assert report.methods == ("detection", "embedding", "surprisal")
    assert len(report.correlations) == 3
    for c in report.correlations:
        x = np.array([truth[lat, False, c["a"]] for lat in latents])
        y = np.array([truth[lat, False, c["b"]] for lat in latents])
        keep = ~np.isnan(x) & ~np.isnan(y)
        expected = stats.spearmanr(x[keep], y[keep])
        assert (
            c["n"]
            == keep.sum()
            == len(latents)
            - sum(lat in {m[0] for m in missing if m[1] in (c["a"], c["b"])} for lat in latents)
        )
        assert c["rho"] == pytest.approx(expected.statistic, abs=1e-12)
        assert c["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
        ranks = np.corrcoef(stats.rankdata(x[keep]), stats.rankdata(y[keep]))[0, 1]
        assert c["rho"] == pytest.approx(ranks, abs=1e-12)


def test_a_constant_score_or_too_few_latents_gives_no_correlation():
    rows = [{"latent": i, "detection": 0.5, "embedding": float(i)} for i in range(5)]
    (c,) = sae_report(rows).correlations
    assert math.isnan(c["rho"]) and c["n"] == 5
    (c,) = sae_report(rows[:2]).correlations
    assert math.isnan(c["rho"]) and c["n"] == 2


def test_means_difference_and_bootstrap_interval_over_latents():
    rows, truth = score_rows(2, n=30, missing={(9, "detection")})
    report = sae_report(rows, n_bootstrap=20_000, random_state=5)
    latents = sorted({lat for lat, _, _ in truth})
    for method in ("detection", "embedding"):
        true = np.array([truth[lat, False, method] for lat in latents])
        shuffled = np.array([truth[lat, True, method] for lat in latents])
        m = report.means[method]
        assert m["true"] == pytest.approx(np.nanmean(true), abs=1e-12)
        assert m["shuffled"] == pytest.approx(shuffled.mean(), abs=1e-12)
        paired = ~np.isnan(true)
        assert m["difference"] == pytest.approx((true - shuffled)[paired].mean(), abs=1e-12)
        assert (m["n"], m["n_shuffled"], m["n_paired"]) == (paired.sum(), 30, paired.sum())
        for kind, values in (
            ("true", true[paired]),
            ("difference", (true - shuffled)[paired]),
        ):
            oracle = stats.bootstrap(
                (values,),
                np.mean,
                n_resamples=20_000,
                method="percentile",
                rng=np.random.default_rng(0),
            ).confidence_interval
            low, high = m[f"{kind}_interval"]
            assert low == pytest.approx(oracle.low, abs=0.01)
            assert high == pytest.approx(oracle.high, abs=0.01)
    # the same seed gives the same report
    again = sae_report(rows, n_bootstrap=20_000, random_state=5)
    assert again.to_dict() == report.to_dict()


def test_best_and_worst_latents_are_in_order_and_disjoint():
    scores = {2: 0.9, 5: 0.4, 7: 0.9, 8: None, 11: 0.1, 13: 0.6, 20: 0.4, 21: 0.75}
    rows = [{"latent": i, "fuzzing": s, "detection": 1.0 - (s or 0.0)} for i, s in scores.items()]
    report = sae_report(rows, method="fuzzing", n_best=2)
    assert report.rank_by == "fuzzing"
    assert report.best == (2, 7)  # ties by latent index
    assert report.worst == (11, 5)  # the lowest first; 8 has no fuzzing score
    three = sae_report(rows, method="fuzzing", n_best=3)
    assert three.best == (2, 7, 21) and three.worst == (11, 5, 20)
    # fewer than 2 x n_best scored latents: the better half are the best, none shown twice
    small = sae_report(rows[:3], method="fuzzing", n_best=5)  # latents 2, 5 and 7
    assert small.best == (2, 7) and small.worst == (5,)
    # the default method is the first scored one in the page's order (detection here)
    assert sae_report(rows, n_best=1).rank_by == "detection"
    assert sae_report(rows, n_best=1).best == (8,)  # 1 - 0.0


def digits_as_latent(latent, **kwargs):
    """``digit_cache`` with its digit latent at index ``latent`` (the others never fire)."""
    cache = digit_cache(**kwargs)
    n = cache.n_records
    offsets = np.r_[np.zeros(latent + 1, np.int64), np.full(2, n)]
    return dataclasses.replace(cache, n_latents=latent + 2, latent_offsets=offsets)


def test_contexts_are_held_out_examples_coloured_by_activation():
    cache = digits_as_latent(2, seed=0, n_contexts=60, length=40, digit_rate=0.3)
    assert cache.firing_counts.tolist() == [0, 0, cache.n_records, 0]
    rows = [
        {"latent": 2, "shuffled": False, "explanation": "digits", "detection": 0.9},
        {"latent": 2, "shuffled": True, "explanation": "animals", "detection": 0.5},
    ]
    report = sae_report(rows, cache=cache, decode=decode, sampling=SAMPLING, n_contexts=3, n_best=1)
    examples = latent_examples(  # `sae explain` draws latent i with the seed + i
        cache, 2, ctx_len=16, n_train=8, n_test=20, min_examples=1, random_state=4 + 2
    )
    strongest_first = sorted(examples.test, key=lambda e: -e.max_activation)
    assert len(strongest_first) == 20  # two per quantile
    # spread over the range: the strongest, the middle (9.5 rounds to even) and the weakest
    expected = [strongest_first[0], strongest_first[10], strongest_first[19]]
    shown = report.contexts[2]
    assert len(shown) == 3
    for context, example in zip(shown, expected, strict=True):
        assert context["tokens"] == [decode(int(t)) for t in example.tokens]
        assert np.allclose(context["activations"], example.activations)
        assert context["max_activation"] == pytest.approx(float(cache.activations.max()))
    html = build_page(report).to_html()
    blocks = re.findall(r'<span class="tokens"[^>]*>(.*?)</span></p>', html, flags=re.S)
    assert len(blocks) == 3
    top = float(cache.activations.max())
    for block, example in zip(blocks, expected, strict=True):
        spans = SPAN.findall(block)
        assert [text for _, _, text in spans] == [decode(int(t)) for t in example.tokens]
        for (_, alpha, _), value in zip(spans, example.activations, strict=True):
            if value == 0:
                assert alpha == ""  # no background
            else:
                assert float(alpha) == pytest.approx(value / top, abs=5e-4)
        # the planted latent fires on digits only: exactly the digit tokens are coloured (but
        # a context's first token, which the cache leaves out)
        coloured = [VOCAB[int(t)].isdigit() and example.start + j > 0
                    for j, t in enumerate(example.tokens)]  # fmt: skip
        assert [bool(a) for _, a, _ in spans] == coloured


def test_activation_html_full_at_the_max_none_at_zero_and_escaped():
    pieces = ["a", " <script>alert(1)</script>", " & b", "\nc"]
    html = str(activation_html(pieces, [0.0, 4.0, 1.0, 0.0]))
    spans = SPAN.findall(html)
    assert [alpha for _, alpha, _ in spans] == ["", "1.000", "0.250", ""]
    assert [text for _, _, text in spans] == [
        "a", " &lt;script&gt;alert(1)&lt;/script&gt;", " &amp; b", "↵c"
    ]  # fmt: skip
    assert "<script>" not in html
    # against a given maximum (the latent's over the cache), clipped to 1
    spans = SPAN.findall(str(activation_html(["x", "y"], [2.0, 9.0], max_activation=8.0)))
    assert [alpha for _, alpha, _ in spans] == ["0.250", "1.000"]
    assert SPAN.findall(str(activation_html(["x"], [0.0])))[0][1] == ""  # all zero: no colour
    with pytest.raises(InputError) as err:
        activation_html(["x", "y"], [1.0])
    assert err.value.argument == "activations"


def test_the_page_escapes_text_and_is_self_contained(tmp_path):
    cache = digit_cache(1, n_contexts=40, length=40, digit_rate=0.3)

    def hostile(token):  # the digit 7 decodes to a script tag
        return " <script>alert('x')</script>" if VOCAB[token] == "7" else decode(token)

    rows = [
        {"latent": 0, "explanation": "<img src=x onerror=alert(1)> & digits", "embedding": 0.8},
        {"latent": 0, "shuffled": True, "explanation": "</p><b>bold</b>", "embedding": 0.4},
    ]
    report = sae_report(rows, cache=cache, decode=hostile, sampling=SAMPLING, n_best=1)
    assert any(
        " <script>alert('x')</script>" in c["tokens"] for c in report.contexts[0]
    )  # the hostile token is shown
    html_path, json_path = write_page(report, tmp_path / "page")
    html = html_path.read_text(encoding="utf-8")
    assert "<script" not in html and "<img src=x" not in html and "<b>bold" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; digits" in html
    assert "&lt;/p&gt;&lt;b&gt;bold&lt;/b&gt;" in html
    # self-contained: every picture inline, nothing fetched from anywhere
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", html)
    assert "http://" not in html and "https://" not in html
    images = re.findall(r'<img src="([^"]*)"', html)
    assert images and all(src.startswith("data:image/png;base64,") for src in images)
    assert "@import" not in html and "url(" not in html
    data = json.loads(json_path.read_text())
    sections = {s["id"]: s for s in data["sections"]}
    assert set(sections) >= {"scores", "histograms", "quantiles", "best", "worst", "latents"}
    assert sections["scores"]["data"]["means"]["embedding"]["true"] == pytest.approx(0.8)


def test_scores_by_quantile_from_per_example_answers():
    # detection: quantile of each example (-1: non-activating) and the answer
    rows = [
        {"latent": 1, "detection": 0.6, "detection_examples": {
            "quantiles": [-1, -1, -1, 0, 0, 1, 1], "predicted": [0, 1, 0, 1, 0, 1, 1]}},
        {"latent": 2, "detection": 0.7, "detection_examples": {
            "quantiles": [-1, 0, 1, 1], "predicted": [1, 1, 0, None]}},
        {"latent": 2, "shuffled": True, "detection": 0.5, "detection_examples": {
            "quantiles": [-1, 0, 1], "predicted": [0, 0, 0]}},
    ]  # fmt: skip
    found = sae_report(rows).by_quantile["detection"]
    assert found["quantiles"] == ["non-activating", 0, 1]
    # by hand: non-activating 2 right of 4; quantile 0: 2 of 3; quantile 1: 2 of 3 (None left out)
    assert found["true"] == [2 / 4, 2 / 3, 2 / 3]
    assert found["n"] == [4, 3, 3]
    assert found["shuffled"] == [1.0, 0.0, 0.0]
    # embedding: per latent, AUROC of one quantile's scores against the non-activating ones
    rng = np.random.default_rng(3)
    rows, quantile_scores = [], {}
    for latent in (4, 5, 6):
        q = np.r_[-np.ones(8, int), np.repeat([0, 1, 2], 4)]
        s = rng.normal(size=len(q)) + 0.3 * (q + 1)
        rows.append({"latent": latent, "embedding": 0.5,
                     "embedding_examples": {"quantiles": q.tolist(), "scores": s.tolist()}})  # fmt: skip
        quantile_scores[latent] = (q, s)
    found = sae_report(rows).by_quantile["embedding"]
    assert found["measure"] == "auroc" and found["quantiles"] == [0, 1, 2]
    for level in (0, 1, 2):
        oracle = []
        for q, s in quantile_scores.values():
            u = stats.mannwhitneyu(s[q == level], s[q < 0]).statistic
            oracle.append(u / ((q == level).sum() * (q < 0).sum()))
        assert found["true"][level] == pytest.approx(np.mean(oracle), abs=1e-12)
    assert all(math.isnan(v) for v in found["shuffled"])
    # no per-example answers: no quantile table, and the page says why
    report = sae_report([{"latent": 0, "surprisal": 0.4}])
    assert report.by_quantile == {}
    assert "no per-example answers" in build_page(report).to_html()


def test_scorer_results_read_like_their_rows():
    quantiles = np.array([-1, -1, 0, 1, 1])
    predicted = np.array([False, True, True, True, False])
    common = dict(method="detection", n_examples=5, n_failed=0, tp=2, tn=1, fp=1, fn=1,
                  accuracy=0.6, precision=2 / 3, recall=2 / 3, f1=2 / 3)  # fmt: skip
    detection = ClassificationScore(
        latent=3, explanation="digits", balanced_accuracy=0.58, interval=(0.3, 0.9),
        answer="logprob", auroc=0.62, activating=quantiles >= 0, predicted=predicted,
        quantiles=quantiles, probabilities=np.full(5, 0.5), **common,
    )  # fmt: skip
    embedding = RankingScore(
        latent=3, method="embedding", explanation="digits", auroc=0.7, interval=(0.5, 0.8),
        n_activating=3, n_not_active=2, scores=np.array([0.1, 0.2, 0.5, 0.3, 0.0]),
        activating=quantiles >= 0, quantiles=quantiles,
    )  # fmt: skip
    shuffled = dataclasses.replace(detection, balanced_accuracy=0.4, interval=(0.1, 0.6))
    objects = sae_report(
        [{"latent": 3, "detection": detection, "embedding": embedding},
         {"latent": 3, "shuffled": True, "explanation": "cats", "detection": shuffled}]
    )  # fmt: skip
    rows = sae_report(
        [{"latent": 3, "explanation": "digits", "detection": 0.58, "detection_auroc": 0.62,
          "detection_interval": [0.3, 0.9], "embedding": 0.7, "embedding_interval": [0.5, 0.8],
          "detection_examples": {"quantiles": quantiles.tolist(),
                                 "predicted": predicted.astype(int).tolist()},
          "embedding_examples": {"quantiles": quantiles.tolist(),
                                 "scores": [0.1, 0.2, 0.5, 0.3, 0.0]}},
         {"latent": 3, "shuffled": True, "explanation": "cats", "detection": 0.4,
          "detection_auroc": 0.62, "detection_interval": [0.1, 0.6], "detection_examples": {
              "quantiles": quantiles.tolist(), "predicted": predicted.astype(int).tolist()}}]
    )  # fmt: skip
    assert objects.to_dict() == rows.to_dict()
    (latent,) = objects.latents
    assert latent["explanation"] == "digits" and latent["shuffled_explanation"] == "cats"
    assert latent["scores"]["detection"]["interval"] == (0.3, 0.9)
    assert latent["scores"]["detection"]["shuffled_interval"] == (0.1, 0.6)
    assert latent["scores"]["detection_auroc"]["score"] == 0.62
    assert objects.by_quantile["detection"]["true"] == [0.5, 1.0, 0.5]


def test_the_result_is_json_safe_and_reads():
    rows, _ = score_rows(3, n=6, missing={(6, "embedding")})
    report = sae_report(rows, n_best=2)
    text = json.dumps(report.to_dict(), allow_nan=False)
    assert json.loads(text)["best"] == list(report.best)
    assert report.summary().startswith("SAE interpretation run: 6 latents scored by detection")
    assert report.plot() is not None
    assert len([a for a in report.histograms().axes if a.get_visible()]) == 3


@pytest.mark.parametrize(
    "make, argument",
    [
        (lambda r, c: sae_report([]), "scores"),
        (lambda r, c: sae_report({"latent": 0}), "scores"),
        (lambda r, c: sae_report([{"latent": 0, "shuffled": False}]), "scores"),
        (lambda r, c: sae_report([{"latent": 0, "embedding": None}]), "scores"),
        (lambda r, c: sae_report([{"latent": -1, "embedding": 0.5}]), "scores[0]['latent']"),
        (lambda r, c: sae_report([{"latent": 0, "embedding": "high"}]), "scores[0]['embedding']"),
        (lambda r, c: sae_report(r + r[:1]), "scores"),  # a latent twice
        # a shuffled row whose latent has no true row
        (lambda r, c: sae_report(r + [{"latent": 99, "shuffled": True, "embedding": 0.5}]),
         "scores"),
        # explanations that miss a scored latent, or say something else than was scored
        (lambda r, c: sae_report(r, [{"latent": 0, "text": "digits"}]), "explanations"),
        (lambda r, c: sae_report(r, [{"latent": 0, "text": "digits"},
                                     {"latent": 1, "text": "other"}]), "explanations"),
        (lambda r, c: sae_report(r, method="fuzzing"), "method"),
        (lambda r, c: sae_report(r, cache=c), "decode"),
        (lambda r, c: sae_report(r, cache="cache/"), "cache"),
        (lambda r, c: sae_report(r, cache=c, decode=decode), "cache"),  # latent 1 is not in it
        (lambda r, c: sae_report(r[:1], cache=c, decode=decode, sampling={"k": 1}), "sampling"),
        (lambda r, c: sae_report(r, n_best=0), "n_best"),
        (lambda r, c: sae_report(r, n_contexts=-1), "n_contexts"),
    ],
)  # fmt: skip
def test_bad_inputs_are_named(make, argument):
    rows = [
        {"latent": 0, "explanation": "digits", "embedding": 0.9},
        {"latent": 1, "explanation": "words", "embedding": 0.3},
    ]
    cache = digit_cache(2, n_contexts=10, length=20)  # latent 0 only
    with pytest.raises(InputError) as err:
        make(rows, cache)
    assert err.value.argument == argument


def test_the_page_needs_a_report():
    with pytest.raises(InputError) as err:
        build_page({"means": {}})
    assert err.value.argument == "report"
