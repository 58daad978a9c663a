"""Tests of trustlab.watermark.describer: check 4 of spec 05 (the description round trip through the
independent parser), determinism and variety of the templates, the fixed final sentence, the
question templates, and bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.watermark import describer as describe_module
from trustlab.watermark.describer import (
    IMPACTS,
    QUESTIONS,
    QUESTIONS_SOURCE,
    ParsedDescription,
    describe,
    impact_level,
    parse_description,
)
from trustlab.watermark.vocabulary import (
    CELLS,
    CONTENT_TYPES,
    LEVELS,
    ORIENTATIONS,
    RELATIONS,
    ObjectRelation,
    WatermarkFacts,
)

NAMES = [
    "dog",
    "person",
    "traffic light",
    "circle",
    "square",
    "digit seven",
    "cup",
    "red car",
    "teddy bear",
    "bowl",
    "astronaut",
    "rocket",
    "coffee cup",
    "cat",
]


@st.composite
def present_facts(draw):
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4))
    relations = tuple(ObjectRelation(n, draw(st.sampled_from(RELATIONS))) for n in names)
    return WatermarkFacts(
        present=True,
        score=draw(st.floats(0.0, 5.0)),
        level=draw(st.sampled_from(LEVELS)),
        cell=draw(st.sampled_from(CELLS)),
        orientation=draw(st.sampled_from(ORIENTATIONS)),
        content_type=draw(st.sampled_from(CONTENT_TYPES)),
        relations=relations,
        objects_known=draw(st.booleans()),
        coverage=draw(st.floats(0.0, 1.0)),
    )


def expected_relations(facts):
    if facts.objects_known:
        return tuple((r.name, r.relation) for r in facts.relations)
    return (("main subject", facts.relations[0].relation),) if facts.relations else ()


@settings(max_examples=400, deadline=None)
@given(present_facts(), st.integers(0, 2**32 - 1))
def test_round_trip_recovers_every_fact(facts, seed):
    for s in (seed, seed + 1, seed + 2):
        text = describe(facts, random_state=s)
        p = parse_description(text)
        assert p.present
        assert p.cell == facts.cell, text
        assert p.orientation == facts.orientation, text
        assert p.relations == expected_relations(facts), text
        assert p.level == facts.level
        impact = impact_level(facts.coverage, facts.score) if facts.objects_known else None
        assert p.impact == impact, text
        assert p.subject_estimated == (not facts.objects_known and bool(facts.relations)), text
        assert p.final_sentence_ok
        # the fixed final sentence, checked without the parser
        assert text.rsplit(". ", 1)[-1] == f"The watermark visibility is: {facts.level}."
        # no boxes, coordinates or numbers of any kind
        assert not re.search(r"\d", text), text
        assert not re.search(r"\b(box|pixel|coordinate|x0|y0)", text, re.IGNORECASE), text


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_absent_watermark(seed):
    facts = WatermarkFacts(present=False, score=2.0, level="moderate", cell="Top-left")
    text = describe(facts, random_state=seed)
    assert text.endswith(" The watermark visibility is: invisible.")
    p = parse_description(text)
    assert not p.present and p.level == "invisible" and p.final_sentence_ok
    assert p.cell is None and p.orientation is None and p.relations == ()
    assert not re.search(r"\d", text)


def test_same_seed_same_text_and_seeds_vary_the_text():
    facts = WatermarkFacts(
        present=True,
        score=2.4,
        level="moderate",
        cell="Middle-right",
        orientation="vertical",
        content_type="pattern",
        relations=(ObjectRelation("dog", "inside"), ObjectRelation("cup", "separate")),
        coverage=0.3,
    )
    assert describe(facts, random_state=7) == describe(facts, random_state=7)
    rng = np.random.default_rng(5)
    a = describe(facts, random_state=rng)
    assert describe(facts, random_state=np.random.default_rng(5)) == a
    texts = {describe(facts, random_state=s) for s in range(40)}
    assert len(texts) >= 30
    # every sentence position varies across seeds
    by_position = [
        {re.split(r"(?<=\.) ", t)[k] for t in texts} for k in range(len(re.split(r"(?<=\.) ", a)))
    ]
    assert all(len(v) >= 2 for v in by_position[:-1]) and len(by_position[-1]) == 1


def test_unknown_objects_say_the_subject_was_estimated():
    facts = WatermarkFacts(
        present=True,
        score=1.2,
        level="visible",
        relations=(ObjectRelation("blob", "partially overlapping"),),
        objects_known=False,
        coverage=0.2,
    )
    text = describe(facts, random_state=0)
    assert "main subject" in text and "estimated" in text and "blob" not in text
    no_rel = WatermarkFacts(present=True, score=1.2, level="visible", objects_known=False)
    text = describe(no_rel, random_state=0)
    assert "not estimated" in text and parse_description(text).relations == ()


def test_unknown_objects_leave_the_impact_unstated():
    """Objects not known (a photo, or any prediction: coverage 0 because unknown): an obvious
    mark was described as not affecting the content ("It does not affect the image content")."""
    for seed in range(6):
        facts = WatermarkFacts(present=True, score=0.5, level="obvious", objects_known=False)
        text = describe(facts, random_state=seed)
        assert "not estimated." in text and parse_description(text).impact is None, text
        assert not re.search(r"no impact|not affect|unaffected", text), text
    known = WatermarkFacts(present=True, score=0.5, level="obvious", coverage=0.5)
    assert parse_description(describe(known, random_state=0)).impact == "severe"


def test_names_with_sentence_punctuation_are_cleaned():
    facts = WatermarkFacts(
        present=True,
        score=4.5,
        level="invisible",
        relations=(ObjectRelation("St. Paul's, dome", "near the edge"),),
    )
    text = describe(facts, random_state=2)
    assert parse_description(text).relations == (("St Paul's dome", "near the edge"),)


def test_impact_level_matches_its_definition():
    rng = np.random.default_rng(0)
    for coverage, score in rng.random((300, 2)) * [1.0, 5.0]:
        x = coverage * (5 - score) / 5
        want = (
            "none" if x < 0.01 else "minor" if x < 0.05 else "noticeable" if x < 0.15 else "severe"
        )
        assert impact_level(coverage, score) == want
    assert impact_level(1.0, 5.0) == "none" and impact_level(1.0, 0.0) == "severe"
    assert set(IMPACTS) == {"none", "minor", "noticeable", "severe"}


def test_parser_on_hand_written_paragraphs():
    text = (
        "The watermark has a horizontal orientation. It can be found in the upper right area of "
        "the image. With respect to the man, it stays away from him. Relative to the bus, the "
        "watermark sits within its outline. It leaves the content unaffected. "
        "The watermark visibility is: faint."
    )
    p = parse_description(text)
    assert (p.orientation, p.cell, p.impact, p.level) == (
        "horizontal",
        "Top-right",
        "none",
        "faint",
    )
    assert p.relations == (("man", "separate"), ("bus", "inside"))
    bad = parse_description("The watermark visibility is:  faint. ")
    assert bad.level is None and not bad.final_sentence_ok
    assert not parse_description("The watermark visibility is: faint.\n").final_sentence_ok
    # a WMarkGPT answer from the authors' WQA-Real references
    authors = (
        "The watermark is diagonally oriented on the image, spanning horizontally and vertically. "
        "The watermark visibility is: visible."
    )
    assert parse_description(authors).orientation == "diagonal"
    assert isinstance(p, ParsedDescription) and "Top-right" in p.summary()
    assert p.to_dict()["relations"] == [["man", "separate"], ["bus", "inside"]]


def test_parser_shares_no_table_with_the_describer():
    names = vars(describe_module)
    tables = {n for n in names if re.fullmatch(r"_[A-Z][A-Z_]*", n) and not n.startswith("_P_")}
    assert {"_CELL_WORDS", "_RELATION_WORDS", "_ORIENTATION"} <= tables
    for fn in (describe_module.parse_description, describe_module._p_cell):
        assert not set(fn.__code__.co_names) & tables


def test_questions_are_the_authors_thirty():
    assert len(QUESTIONS) == 30 and len(set(QUESTIONS)) == 30
    assert all(q.endswith("?") or q.endswith(".") for q in QUESTIONS)
    assert all("watermark" in q for q in QUESTIONS)
    assert QUESTIONS_SOURCE["licence"] == "Apache-2.0"
    assert QUESTIONS_SOURCE["source"].endswith("TanSongBai/WMarkGPT")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: describe("a dog"), "facts"),
        (
            lambda: describe(WatermarkFacts(True, 3.0, "moderate"), random_state=-1),
            "random_state",
        ),
        (lambda: describe(WatermarkFacts(True, 3.0, "moderate"), random_state="x"), "random_state"),
        (lambda: parse_description(None), "text"),
        (lambda: impact_level(1.5, 2.0), "coverage"),
        (lambda: impact_level(0.5, float("nan")), "score"),
        (lambda: impact_level("a", 2.0), "coverage"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(InputError, match=re.escape(name)):
        call()
