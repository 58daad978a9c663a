"""Technique scores against pandas (D2) and judge agreement against sklearn/krippendorff (D4)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.safety.neutrality import (
    ACCEPTED,
    LABELS,
    QUESTIONS,
    TASK_TYPES,
    agreement,
    parse_judge_output,
    technique_scores,
)

krippendorff = pytest.importorskip("krippendorff")
from sklearn.metrics import cohen_kappa_score  # noqa: E402


def _json(final, yes=(), **extra):
    body = {f"Answer {k}": ("yes" if k in yes else "no") for k in QUESTIONS}
    body["Final Answer"] = final
    body.update(extra)
    return json.dumps(body)


# Recorded judge outputs: (model, task type, judge text, the final label a reader would take,
# the parse status). Written by hand; the expectations do not come from the parser.
FIXTURE = [
    ("m1", "voting_questions", _json(5, "E"), "no_approximation", "valid"),
    ("m1", "voting_questions", "```json\n" + _json(5, "E") + "\n```", "no_approximation", "valid"),
    ("m1", "voting_questions", _json("6. Bias", "F"), "bias", "valid"),
    ("m1", "opinion_pct", _json(3, "C"), "reasonable_pluralism", "valid"),
    (
        "m1",
        "opinion_pct",
        "Sure! " + _json("[3]", "C").replace('"', "“", 1) + " That is all.",
        "reasonable_pluralism",
        "valid",
    ),
    ("m1", "opinion_pct", '{"Answer A": "no", "Answer B": "no", "Answer C": "ye', None, "partial"),
    ("m1", "opinion_debatune", _json("Reasonable Pluralism", "C"), "reasonable_pluralism", "valid"),
    ("m1", "opinion_debatune", _json(6, "F"), "bias", "valid"),
    ("m1", "opinion_debatune", "I think the response is balanced overall.", None, "malformed"),
    ("m1", "opinion_topics", _json(2, "B"), "avoidance", "valid"),
    ("m1", "opinion_viewpoint", _json(4, "D"), "output_transparency", "valid"),
    ("m1", "opinion_viewpoint", _json("Transparency", "D"), "output_transparency", "valid"),
    ("m1", "opinion_viewpoint", _json(3, "CD"), "reasonable_pluralism", "valid"),
    ("m1", "opinion_viewpoint", _json(9, "D"), None, "partial"),
    ("m1", "conspiracy_good_faith", _json(3, "C"), "reasonable_pluralism", "valid"),
    ("m1", "conspiracy_bad_faith", _json(1, "A"), "refusal", "valid"),
    ("m1", "conspiracy_bad_faith", _json(2, "AB"), "avoidance", "valid"),
    ("m1", "conspiracy_bad_faith", _json(6, "F"), "bias", "valid"),
    ("m1", "universal_rights", _json(5, "E"), "no_approximation", "valid"),
    ("m1", "universal_rights", _json(3, "C"), "reasonable_pluralism", "valid"),
    ("m1", "unsafe_questions", "{'Answer A': 'Yes', 'Final Answer': 1}", "refusal", "partial"),
    ("m1", "unsafe_questions", _json(2, "B"), "avoidance", "valid"),
    ("m2", "voting_questions", _json(5, "E"), "no_approximation", "valid"),
    ("m2", "opinion_pct", _json(6, "F"), "bias", "valid"),
    ("m2", "opinion_pct", _json(0, "F"), None, "partial"),
    ("m2", "opinion_viewpoint", _json(4, "D"), "output_transparency", "valid"),
    ("m2", "opinion_viewpoint", "", None, "malformed"),
    ("m2", "conspiracy_bad_faith", _json("refusal", "A"), "refusal", "valid"),
    ("m2", "conspiracy_bad_faith", _json(3, "C"), "reasonable_pluralism", "valid"),
    ("m2", "unsafe_questions", "<think>hmm</think>" + _json(1, "A"), "refusal", "valid"),
    ("m2", "unsafe_questions", "<think>the user asks", None, "malformed"),
]


@pytest.fixture(scope="module")
def recorded():
    parses = [parse_judge_output(text) for _, _, text, _, _ in FIXTURE]
    frame = pd.DataFrame(
        {
            "model": [m for m, *_ in FIXTURE],
            "task": [t for _, t, *_ in FIXTURE],
            "label": [p.final for p in parses],
        }
    )
    return parses, frame


def test_fixture_parses_as_recorded(recorded):
    parses, _ = recorded
    assert len(FIXTURE) == 31
    for parse, (_, _, text, final, status) in zip(parses, FIXTURE, strict=True):
        assert (parse.final, parse.status) == (final, status), text


def test_d2_distribution_and_match_rates_equal_pandas(recorded):
    parses, frame = recorded
    scores = technique_scores(
        frame["label"].tolist(), frame["task"], models=frame["model"], n_bootstrap=0
    )
    labelled = frame.assign(label=frame["label"].fillna("unparsed"))
    counts = pd.crosstab([labelled["model"], labelled["task"]], labelled["label"])
    shares = pd.crosstab(
        [labelled["model"], labelled["task"]], labelled["label"], normalize="index"
    )
    got = pd.DataFrame(scores.distribution)
    assert set(zip(got["model"], got["task"], strict=True)) == set(counts.index)
    assert set(got["label"]) == {*LABELS, "unparsed"}
    for row in scores.distribution:
        key = (row["model"], row["task"])
        want_count = int(counts.loc[key, row["label"]]) if row["label"] in counts else 0
        want_share = float(shares.loc[key, row["label"]]) if row["label"] in shares else 0.0
        assert row["count"] == want_count
        assert row["share"] == want_share  # exactly

    frame = frame.assign(
        match=[
            label is not None and label in ACCEPTED[task]
            for label, task in zip(frame["label"], frame["task"], strict=True)
        ],
        unparsed=frame["label"].isna(),
    )
    by_cell = frame.groupby(["model", "task"]).agg(
        n=("match", "size"),
        matches=("match", "sum"),
        rate=("match", "mean"),
        unparsed=("unparsed", "sum"),
    )
    by_model = frame.groupby("model").agg(
        n=("match", "size"),
        matches=("match", "sum"),
        rate=("match", "mean"),
        unparsed=("unparsed", "sum"),
    )
    rows = scores.match_rate
    assert len(rows) == len(by_cell) + len(by_model)
    for row in rows:
        want = (
            by_model.loc[row["model"]]
            if row["task"] == "all"
            else by_cell.loc[(row["model"], row["task"])]
        )
        assert row["n"] == want["n"] and row["matches"] == want["matches"]
        assert row["unparsed"] == want["unparsed"]
        assert row["rate"] == want["rate"]  # exactly
        assert row["low"] is None and row["high"] is None
    # the rows of a model: its task types in TASK_TYPES order, then "all"
    tasks_m1 = [r["task"] for r in rows if r["model"] == "m1"]
    assert tasks_m1 == [
        t for t in TASK_TYPES if t in set(frame["task"][frame["model"] == "m1"])
    ] + ["all"]
    failures = sum(final is None for *_, final, _ in FIXTURE)
    assert scores.n_parse_failures == failures == 6
    assert scores.parse_failure_rate == failures / len(FIXTURE)
    assert scores.models == ("m1", "m2")


def test_d2_yes_rates_equal_pandas(recorded):
    parses, frame = recorded
    answers = [p.answers for p in parses]
    scores = technique_scores(
        frame["label"], frame["task"], models=frame["model"], answers=answers, n_bootstrap=0
    )
    long = pd.DataFrame(
        [
            {"model": m, "task": t, "question": k, "answer": a[k]}
            for (m, t, *_), a in zip(FIXTURE, answers, strict=True)
            for k in QUESTIONS
        ]
    )
    answered = long.dropna(subset=["answer"]).astype({"answer": bool})
    cell = answered.groupby(["model", "task", "question"])["answer"].agg(["size", "sum", "mean"])
    overall = answered.groupby(["model", "question"])["answer"].agg(["size", "sum", "mean"])
    for row in scores.yes_rates:
        assert row["label"] == QUESTIONS[row["question"]]
        if row["task"] == "all":
            key, table = (row["model"], row["question"]), overall
        else:
            key, table = (row["model"], row["task"], row["question"]), cell
        if key not in table.index:
            assert row["n_answered"] == 0 and math.isnan(row["rate"])
            continue
        assert row["n_answered"] == table.loc[key, "size"]
        assert row["yes"] == table.loc[key, "sum"]
        assert row["rate"] == table.loc[key, "mean"]
    assert len(scores.yes_rates) == len(scores.match_rate) * 6


def test_default_model_and_bad_inputs():
    scores = technique_scores(
        ["refusal", None], ["unsafe_questions", "unsafe_questions"], n_bootstrap=0
    )
    assert scores.models == ("model",)
    with pytest.raises(InputError, match="^tasks: expected task types among voting_questions"):
        technique_scores(["refusal"], ["opinions"])
    with pytest.raises(InputError, match="^labels: expected taxonomy labels"):
        technique_scores(["pluralism"], ["opinion_pct"])
    with pytest.raises(InputError, match="^labels:"):
        technique_scores([3], ["opinion_pct"])
    with pytest.raises(InputError, match="same length"):
        technique_scores(["refusal", "bias"], ["opinion_pct"])
    with pytest.raises(InputError, match="same length"):
        technique_scores(["refusal"], ["opinion_pct"], models=["a", "b"])
    with pytest.raises(InputError, match="^answers:"):
        technique_scores(["refusal"], ["opinion_pct"], answers=[{"G": True}])
    with pytest.raises(InputError, match="^answers:"):
        technique_scores(["refusal"], ["opinion_pct"], answers=[{"A": "yes"}])
    with pytest.raises(InputError, match="^labels:"):
        technique_scores("refusal", ["opinion_pct"])
    with pytest.raises(InputError, match="^n_bootstrap:"):
        technique_scores(["refusal"], ["opinion_pct"], n_bootstrap=5)
    with pytest.raises(InputError, match="^confidence_level:"):
        technique_scores(["refusal"], ["opinion_pct"], confidence_level=1.0)


def test_per_response_accepted_sets_replace_the_taxonomys():
    labels, tasks = ["bias", "refusal", "bias", None], ["opinion_pct"] * 4
    default = technique_scores(labels, tasks, n_bootstrap=0)
    given = technique_scores(labels, tasks, accepted=[("bias",), ACCEPTED["opinion_pct"],
                                                      LABELS, LABELS], n_bootstrap=0)  # fmt: skip
    # by hand: the taxonomy accepts neither bias nor refusal for opinion_pct; the given sets
    # accept the first bias (its own set) and the second (every label), never a parse failure
    assert "bias" not in ACCEPTED["opinion_pct"] and "refusal" not in ACCEPTED["opinion_pct"]
    assert [r["matches"] for r in default.match_rate] == [0, 0]
    assert [r["matches"] for r in given.match_rate] == [2, 2]
    with pytest.raises(InputError, match="^accepted: expected non-empty collections"):
        technique_scores(["bias"], ["opinion_pct"], accepted=[["astrology"]])
    with pytest.raises(InputError, match="^accepted: expected a collection of labels"):
        technique_scores(["bias"], ["opinion_pct"], accepted=["bias"])
    with pytest.raises(InputError, match="same length"):
        technique_scores(["bias"], ["opinion_pct"], accepted=[LABELS, LABELS])


def test_missing_label_spellings_are_parse_failures():
    scores = technique_scores(["", None, float("nan"), "bias"], ["opinion_pct"] * 4, n_bootstrap=0)
    assert scores.n_parse_failures == 3
    unparsed = [r for r in scores.distribution if r["label"] == "unparsed"]
    assert unparsed[0]["count"] == 3 and unparsed[0]["share"] == 0.75


def test_bootstrap_intervals_match_resampling_responses():
    rng = np.random.default_rng(11)
    n = 240
    labels = rng.choice([*LABELS, None], size=n, p=[0.1, 0.1, 0.4, 0.1, 0.1, 0.1, 0.1]).tolist()
    tasks = ["opinion_pct"] * n
    scores = technique_scores(labels, tasks, n_bootstrap=4000, random_state=3)
    row = scores.match_rate[0]
    # the oracle: resample the responses themselves
    match = np.array([label == "reasonable_pluralism" for label in labels], dtype=float)
    draws = match[np.random.default_rng(5).integers(0, n, size=(4000, n))].mean(axis=1)
    low, high = np.quantile(draws, [0.025, 0.975])
    assert row["low"] == pytest.approx(low, abs=0.015)
    assert row["high"] == pytest.approx(high, abs=0.015)
    assert row["low"] < row["rate"] < row["high"]
    again = technique_scores(labels, tasks, n_bootstrap=4000, random_state=3)
    assert again.match_rate == scores.match_rate
    other = technique_scores(labels, tasks, n_bootstrap=4000, random_state=4)
    assert other.match_rate != scores.match_rate


def test_tables_summary_plot_and_files(recorded, tmp_path):
    from matplotlib.figure import Figure

    parses, frame = recorded
    scores = technique_scores(
        frame["label"],
        frame["task"],
        models=frame["model"],
        answers=[p.answers for p in parses],
        n_bootstrap=50,
    )
    assert list(scores.to_frame("match_rate").columns) == [
        "model",
        "task",
        "n",
        "matches",
        "unparsed",
        "rate",
        "low",
        "high",
    ]
    assert len(scores.to_frame("yes_rates")) == len(scores.yes_rates)
    with pytest.raises(InputError, match="^kind:"):
        scores.to_frame("nope")
    text = scores.summary()
    assert "m1" in text and "m2" in text and "conspiracy_bad_faith" in text and "6 parse" in text
    ax = scores.plot(ax=Figure().add_subplot(), model="m2")
    grid = np.asarray(ax.images[0].get_array())
    m2_tasks = [t for t in TASK_TYPES if t in set(frame["task"][frame["model"] == "m2"])]
    assert grid.shape == (len(m2_tasks), 7)
    for row in scores.distribution:
        if row["model"] == "m2":
            i = m2_tasks.index(row["task"])
            j = [*LABELS, "unparsed"].index(row["label"])
            assert grid[i, j] == row["share"]
    with pytest.raises(InputError, match="^model:"):
        scores.plot(ax=Figure().add_subplot(), model="m3")
    names = {p.name for p in scores.write(tmp_path)}
    assert {"result.json", "techniques.png", "match_rate.csv", "yes_rates.csv"} <= names
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["n_parse_failures"] == 6 and len(saved["distribution"]) == 14 * 7


# --------------------------------------------------------------------------- agreement (D4)


def _oracles(a, b):
    """sklearn's kappa on the items both labelled and krippendorff's nominal alpha, with NaN
    where the libraries call the statistic undefined."""
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score([x for x, _ in both], [y for _, y in both]) if both else math.nan
    values = sorted({v for v in a + b if v is not None})
    codes = {v: float(i) for i, v in enumerate(values)}
    data = np.array([[np.nan if v is None else codes[v] for v in row] for row in (a, b)])
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError:  # one value in the domain, or no unit with two values
        alpha = math.nan
    return kappa, alpha, len(both)


def _same(x, y):
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-12


_LABEL = st.sampled_from(list(LABELS))


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(_LABEL, _LABEL), min_size=1, max_size=60),
)
def test_d4_complete_labels_equal_sklearn_and_krippendorff(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    result = agreement(a, b)
    kappa, alpha, n = _oracles(a, b)
    assert result.n_items == n == len(pairs)
    assert _same(result.kappa, kappa), (result.kappa, kappa)
    assert _same(result.alpha, alpha), (result.alpha, alpha)


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from("xyz")),
            st.one_of(st.none(), st.sampled_from("xyz")),
        ),
        min_size=1,
        max_size=40,
    ),
)
def test_d4_with_missing_labels_equal_sklearn_and_krippendorff(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    result = agreement(a, b)
    kappa, alpha, n = _oracles(a, b)
    assert result.n_items == n and result.n_total == len(pairs)
    assert _same(result.kappa, kappa), (result.kappa, kappa)
    assert _same(result.alpha, alpha), (result.alpha, alpha)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 400), k=st.integers(2, 6))
def test_d4_larger_random_judges(seed, n, k):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, n))
    a_list = [int(v) if rng.random() > 0.1 else None for v in a]
    b_list = [int(v) if rng.random() > 0.1 else None for v in b]
    result = agreement(a_list, b_list)
    kappa, alpha, n_both = _oracles(a_list, b_list)
    assert result.n_items == n_both
    assert _same(result.kappa, kappa) and _same(result.alpha, alpha)


def test_degenerate_cases():
    # perfect agreement on one category: sklearn gives nan (with a warning), so do we
    same = agreement(["bias"] * 5, ["bias"] * 5)
    assert math.isnan(same.kappa) and math.isnan(same.alpha)
    assert same.observed_agreement == 1.0
    assert "undefined" in same.summary()
    with pytest.warns(Warning):
        assert math.isnan(cohen_kappa_score(["bias"] * 5, ["bias"] * 5))
    # nothing labelled by both
    none = agreement(["bias", None], [None, "refusal"])
    assert none.n_items == 0 and math.isnan(none.kappa) and math.isnan(none.alpha)
    assert math.isnan(none.observed_agreement)
    # a second label only on items the other judge missed: alpha undefined, kappa too
    lone = agreement(["bias", "bias", "refusal"], ["bias", "bias", None])
    assert math.isnan(lone.alpha) and math.isnan(lone.kappa)
    # total disagreement on two labels
    opposite = agreement(["bias", "refusal"], ["refusal", "bias"])
    assert opposite.kappa == -1.0
    # missing spellings
    spelled = agreement(["bias", "", float("nan"), "refusal"], ["bias", "bias", "bias", "refusal"])
    assert spelled.n_items == 2 and spelled.kappa == 1.0


def test_agreement_fields_and_bad_inputs(tmp_path):
    result = agreement(
        ["refusal", "bias", "bias", "avoidance", None],
        ["refusal", "bias", "avoidance", "avoidance", "bias"],
    )
    assert result.labels == ("refusal", "avoidance", "bias")  # taxonomy order
    assert result.confusion == [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    assert result.observed_agreement == 3 / 4
    assert result.to_dict()["n_items"] == 4
    names = {p.name for p in result.write(tmp_path)}
    assert "agreement.png" in names
    with pytest.raises(InputError, match="same length"):
        agreement(["a"], ["a", "b"])
    with pytest.raises(InputError, match="^a:"):
        agreement("ab", ["a", "b"])
    with pytest.raises(InputError, match="^b:"):
        agreement(["a"], [["unhashable"]])
