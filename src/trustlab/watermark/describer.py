"""The deterministic describer: :class:`~trustlab.watermark.vocabulary.WatermarkFacts` into a
WMarkGPT-style paragraph, WMarkGPT's 30 questions, and an independent parser of the paragraphs.

:func:`describe` writes, in WMarkGPT's order, (1) the orientation, (2) the location (the 3x3 cell)
and the relation to each object (named objects when they are annotated; otherwise "the main
subject", saying that it was estimated), (3) the appearance (content type; an opacity word from
the score), (4) the impact on the content (coverage x visibility: none / minor / noticeable /
severe, :func:`impact_level`; when the objects are not known, that it is not estimated, since
their coverage is unknown), and (5) the fixed final sentence ``The watermark visibility is: L.``.
Each sentence is drawn from several templates by a seeded generator, so the same facts and seed
always give the same text; it states only what the facts hold and never a box or a coordinate.

The answer format, which :func:`parse_description` reads with its own patterns (it shares no
template table or word list with the describer):

- sentences end with ``.`` followed by one space; object names carry no ``.`` ``,`` or ``;``;
- one sentence holds ``horizontal(ly)``, ``vertical(ly)`` or ``diagonal(ly)``;
- one sentence says where the watermark is "located / placed / positioned / found in" a region
  named with top/upper, bottom/lower, left, right, centre/center/central/middle;
- each relation is one sentence ``<Relative to | With respect to | As for> the <name>, <the
  watermark | it> <phrase>.``; the phrase says inside/within/contained, overlap(s), edge, or
  separate/apart/not touch;
- the impact sentence mentions the "content" and says "no impact"/"does not affect"/
  "unaffected", or minor, noticeable, severe (or "not estimated": no impact is read);
- the last sentence is exactly ``The watermark visibility is: L.``.

>>> from trustlab.watermark.vocabulary import ObjectRelation, WatermarkFacts
>>> facts = WatermarkFacts(present=True, score=3.4, level="faint", cell="Top-left",
...     orientation="diagonal", relations=(ObjectRelation("dog", "partially overlapping"),),
...     coverage=0.1)
>>> text = describe(facts, random_state=0)
>>> text.endswith("The watermark visibility is: faint.")
True
>>> p = parse_description(text)
>>> p.cell, p.orientation, p.relations, p.level
('Top-left', 'diagonal', (('dog', 'partially overlapping'),), 'faint')
>>> len(QUESTIONS)
30
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from trustlab._checks import check_random_state
from trustlab._results import Result
from trustlab.errors import InputError
from trustlab.watermark.vocabulary import (
    CELLS,
    WatermarkFacts,
    level_of_score,
)

__all__ = [
    "QUESTIONS",
    "QUESTIONS_SOURCE",
    "IMPACTS",
    "FINAL_SENTENCE",
    "impact_level",
    "describe",
    "ParsedDescription",
    "parse_description",
]

#: The fixed last sentence of every paragraph (``FINAL_SENTENCE.format(level)``).
FINAL_SENTENCE = "The watermark visibility is: {}."
#: Impact of the watermark on the image content, from the least to the most.
IMPACTS: tuple[str, ...] = ("none", "minor", "noticeable", "severe")
_IMPACT_EDGES = (0.01, 0.05, 0.15)


def _load_questions() -> tuple[tuple[str, ...], dict[str, str]]:
    raw = resources.files("trustlab.watermark").joinpath("data/questions.json").read_text("utf-8")
    doc = json.loads(raw)
    source = {k: v for k, v in doc.items() if k != "questions"}
    return tuple(doc["questions"]), source


#: WMarkGPT's 30 question templates (verbatim from the authors' ``evaluate/eva.py``, Apache-2.0).
#: Source, commit and licence: :data:`QUESTIONS_SOURCE`.
QUESTIONS, QUESTIONS_SOURCE = _load_questions()

# ------------------------------------------------------------------ the describer's templates

_ORIENTATION = (
    "The watermark is oriented {adv}.",
    "The watermark runs {adv} across the image.",
    "The watermark has a {adj} orientation.",
    "The watermark is laid out {adv}.",
)
_ADVERB = {"horizontal": "horizontally", "vertical": "vertically", "diagonal": "diagonally"}

_LOCATION = (
    "It is located in {where} of the image.",
    "The watermark is placed in {where} of the frame.",
    "It is positioned in {where} of the picture.",
    "It can be found in {where} of the image.",
)
_CELL_WORDS = {
    "Top-left": ("the top-left corner", "the upper-left corner", "the upper left area"),
    "Middle-top": ("the middle of the top edge", "the top centre", "the upper middle area"),
    "Top-right": ("the top-right corner", "the upper-right corner", "the upper right area"),
    "Middle-left": ("the middle of the left side", "the left-centre area", "the left middle area"),
    "Center": ("the centre", "the central area", "the middle"),
    "Middle-right": (
        "the middle of the right side",
        "the right-centre area",
        "the right middle area",
    ),
    "Bottom-left": ("the bottom-left corner", "the lower-left corner", "the lower left area"),
    "Middle-bottom": (
        "the middle of the bottom edge",
        "the bottom centre",
        "the lower middle area",
    ),
    "Bottom-right": ("the bottom-right corner", "the lower-right corner", "the lower right area"),
}

_RELATION_FRAME = (
    "Relative to the {name}, the watermark {phrase}.",
    "With respect to the {name}, it {phrase}.",
    "As for the {name}, the watermark {phrase}.",
)
_RELATION_WORDS = {
    "inside": ("lies entirely inside it", "is contained within it", "sits wholly within its area"),
    "partially overlapping": (
        "partially overlaps it",
        "overlaps part of it",
        "overlaps it in part",
    ),
    "near the edge": ("lies near its edge", "sits close to its edge", "runs along its edge"),
    "separate": ("is separate from it", "stays apart from it", "does not touch it"),
}
_NO_OBJECTS = (
    "There are no known objects to relate it to.",
    "No objects are known in the image to relate it to.",
)
_SUBJECT_ESTIMATED = (
    "No objects are annotated, so the main subject was estimated from the image.",
    "Without annotated objects, the main subject was estimated from the image itself.",
)
_SUBJECT_UNKNOWN = (
    "No objects are annotated, and its relation to the main subject is not estimated.",
    "Without annotated objects, its relation to a main subject is not estimated.",
)

_APPEARANCE = (
    "It consists of {content} and looks {look}.",
    "The watermark is {content}, {look} against the background.",
    "In appearance it is {content} that looks {look}.",
)
_CONTENT_WORDS = {
    "logo": ("a logo", "a logo graphic"),
    "text": ("text", "a line of text"),
    "pattern": ("a repeated pattern", "a tiled pattern"),
    "invisible": ("an embedded signal", "a signal hidden in the image data"),
}
_LOOK_WORDS = {  # by the level of the score
    "invisible": ("imperceptible", "fully transparent"),
    "faint": ("very translucent", "barely perceptible"),
    "moderate": ("translucent", "semi-transparent"),
    "visible": ("fairly opaque", "clearly discernible"),
    "obvious": ("nearly opaque", "strongly opaque"),
}

_IMPACT = {
    "none": ("It does not affect the image content.", "The image content is left unaffected."),
    "minor": ("It has a minor impact on the image content.", "Its effect on the content is minor."),
    "noticeable": (
        "It has a noticeable impact on the image content.",
        "Its effect on the content is noticeable.",
    ),
    "severe": (
        "It has a severe impact on the image content.",
        "Its effect on the content is severe.",
    ),
}

_IMPACT_UNKNOWN = (  # objects not known: their coverage, so the impact, was not estimated
    "Its impact on the image content is not estimated.",
    "Its effect on the content was not estimated.",
)

# present=False: a clean image (ground truth), or a prediction at the invisible level (score 4 to
# 5), which cannot tell a clean image from a mark too faint to see: "no visible watermark" is true
# of both, and no impact is claimed
_ABSENT = (
    "No visible watermark was found in the image.",
    "The image shows no visible sign of a watermark.",
    "No visible watermark could be detected in this image.",
)
_ABSENT_DETAIL = (
    "There is no visible overlay, text or pattern to describe.",
    "No logo, text or pattern can be seen on the image.",
)
_FAINT_REGION = (  # an invisible-level prediction whose heatmap still located a region
    "Its heatmap still points to {where} of the image, where a mark too faint to see may lie.",
    "The heatmap still marks {where} of the image as a possible place of a mark too faint to see.",
)

_NAME_JUNK = re.compile(r"[.,;!?\s]+")  # the parser splits sentences at . ! ?


def impact_level(coverage: float, score: float) -> str:
    """The impact of a watermark on the content, one of :data:`IMPACTS`.

    ``x = coverage * (5 - score) / 5``: the fraction of the objects' area covered, weighted by the
    visibility strength (0 for a score of 5, 1 for a score of 0). ``x < 0.01`` is none,
    ``< 0.05`` minor, ``< 0.15`` noticeable, otherwise severe.

    Examples
    --------
    >>> impact_level(0.0, 0.0), impact_level(0.2, 4.5), impact_level(0.2, 2.0), impact_level(0.5, 1.0)
    ('none', 'minor', 'noticeable', 'severe')
    """
    c = _number(coverage, "coverage", 0.0, 1.0)
    s = _number(score, "score", 0.0, 5.0)
    x = c * (5.0 - s) / 5.0
    for edge, label in zip(_IMPACT_EDGES, IMPACTS, strict=False):
        if x < edge:
            return label
    return IMPACTS[-1]


def _number(value: Any, name: str, low: float, high: float) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a number", value) from None
    if not low <= out <= high:  # also refuses NaN
        raise InputError.bad(name, f"a number in [{low:g}, {high:g}]", value)
    return out


def describe(
    facts: WatermarkFacts, *, random_state: Any = None, faint_region: str | None = None
) -> str:
    """A WMarkGPT-style paragraph that states what ``facts`` hold, ending with the fixed sentence.

    Parameters
    ----------
    facts : WatermarkFacts
        Ground truth or a prediction. For ``present=False`` the paragraph says no visible
        watermark was found (a prediction at the invisible level cannot tell a clean image from a
        mark too faint to see) and ends with ``The watermark visibility is: invisible.``.
    random_state : None, int or numpy.random.Generator
        Chooses among the templates of each sentence (the same seed, the same text).
    faint_region : None or str
        Only with ``present=False``: a cell of :data:`~trustlab.watermark.vocabulary.CELLS` where
        a prediction's heatmap still located a region (``located``); the paragraph then says the
        heatmap points there, where a mark too faint to see may lie.

    Returns
    -------
    str
        One paragraph; object names are written with ``.``, ``,``, ``;``, ``!`` and ``?``
        replaced by spaces.

    Examples
    --------
    >>> from trustlab.watermark.vocabulary import WatermarkFacts
    >>> text = describe(WatermarkFacts(present=False, score=5.0, level="invisible"), random_state=1)
    >>> text.endswith("The watermark visibility is: invisible."), parse_description(text).present
    (True, False)
    """
    if not isinstance(facts, WatermarkFacts):
        raise InputError.bad("facts", "a WatermarkFacts", facts)
    rng = check_random_state(random_state)

    def pick(options: tuple[str, ...]) -> str:
        return options[int(rng.integers(len(options)))]

    if faint_region is not None and (facts.present or faint_region not in CELLS):
        raise InputError.bad(
            "faint_region", f"None, or one of {', '.join(CELLS)} with present=False", faint_region
        )
    if not facts.present:
        sentences = [pick(_ABSENT), pick(_ABSENT_DETAIL)]
        if faint_region is not None:
            sentences.append(pick(_FAINT_REGION).format(where=pick(_CELL_WORDS[faint_region])))
        return " ".join([*sentences, FINAL_SENTENCE.format("invisible")])
    adj = facts.orientation
    sentences = [
        pick(_ORIENTATION).format(adj=adj, adv=_ADVERB[adj]),
        pick(_LOCATION).format(where=pick(_CELL_WORDS[facts.cell])),
    ]
    if facts.objects_known:
        named = [(_clean_name(r.name), r.relation) for r in facts.relations]
        if not named:
            sentences.append(pick(_NO_OBJECTS))
    elif facts.relations:
        sentences.append(pick(_SUBJECT_ESTIMATED))
        named = [("main subject", facts.relations[0].relation)]
    else:
        sentences.append(pick(_SUBJECT_UNKNOWN))
        named = []
    for name, relation in named:
        phrase = pick(_RELATION_WORDS[relation])
        sentences.append(pick(_RELATION_FRAME).format(name=name, phrase=phrase))
    look = pick(_LOOK_WORDS[level_of_score(facts.score)])
    sentences.append(
        pick(_APPEARANCE).format(content=pick(_CONTENT_WORDS[facts.content_type]), look=look)
    )
    if facts.objects_known:
        sentences.append(pick(_IMPACT[impact_level(facts.coverage, facts.score)]))
    else:  # no coverage of objects to weigh: saying "no impact" would state what was not known
        sentences.append(pick(_IMPACT_UNKNOWN))
    sentences.append(FINAL_SENTENCE.format(facts.level))
    return " ".join(sentences)


def _clean_name(name: str) -> str:
    cleaned = _NAME_JUNK.sub(" ", str(name)).strip()
    return cleaned or "object"


# ------------------------------------------------------------------ the independent parser
# Written from the answer format in the module docstring only: no template or word list above is
# used below.

_P_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
_P_FINAL = re.compile(r"The watermark visibility is: (invisible|faint|moderate|visible|obvious)\.")
_P_ABSENT = re.compile(r"\bno (?:visible )?(?:sign of a )?watermark\b", re.IGNORECASE)
_P_ORIENTATION = re.compile(r"\b(horizontal|vertical|diagonal)(?:ly)?\b", re.IGNORECASE)
_P_WHERE = re.compile(r"\b(?:located|placed|positioned|found)\s+in\s+(.+)$", re.IGNORECASE)
_P_RELATION = re.compile(
    r"^(?:relative to|with respect to|as for)\s+the\s+([^,;.]+?),"
    r"\s+(?:the watermark|it)\s+(.+?)\.?$",
    re.IGNORECASE,
)
_P_TOP = re.compile(r"\b(?:top|upper)\b", re.IGNORECASE)
_P_BOTTOM = re.compile(r"\b(?:bottom|lower)\b", re.IGNORECASE)
_P_LEFT = re.compile(r"\bleft\b", re.IGNORECASE)
_P_RIGHT = re.compile(r"\bright\b", re.IGNORECASE)
_P_MIDDLE = re.compile(r"\b(?:cent(?:re|er|ral)|middle)\b", re.IGNORECASE)
_P_CONTENT = re.compile(r"\bcontent\b", re.IGNORECASE)
_P_ESTIMATED = re.compile(r"\bmain subject\b(?:(?!\bnot\b)[^.])*\bestimated\b", re.IGNORECASE)
_P_IMPACT = (
    ("none", re.compile(r"\b(?:no impact|not affect|unaffected)\b", re.IGNORECASE)),
    ("minor", re.compile(r"\bminor\b", re.IGNORECASE)),
    ("noticeable", re.compile(r"\bnoticeable\b", re.IGNORECASE)),
    ("severe", re.compile(r"\bsevere\b", re.IGNORECASE)),
)
_P_RELATION_KIND = (  # checked in this order
    ("partially overlapping", re.compile(r"\boverlap", re.IGNORECASE)),
    ("near the edge", re.compile(r"\bedge\b", re.IGNORECASE)),
    ("inside", re.compile(r"\b(?:inside|within|contained)\b", re.IGNORECASE)),
    ("separate", re.compile(r"\b(?:separate|apart|not touch|away from)\b", re.IGNORECASE)),
)


@dataclass(frozen=True)
class ParsedDescription(Result):
    """What :func:`parse_description` read from a paragraph (None where a part was not found).

    ``relations`` holds ``(name, relation)`` pairs in the order of the paragraph;
    ``final_sentence_ok`` tells whether the paragraph ends exactly with
    ``The watermark visibility is: L.`` (one space after the colon, the period, nothing after).
    """

    present: bool
    cell: str | None
    orientation: str | None
    relations: tuple[tuple[str, str], ...]
    level: str | None
    impact: str | None
    subject_estimated: bool
    final_sentence_ok: bool

    def summary(self) -> str:
        if not self.present:
            return f"no watermark; level {self.level}; final sentence ok: {self.final_sentence_ok}"
        rel = "; ".join(f"{r} the {n}" for n, r in self.relations) or "no relations"
        return (
            f"{self.orientation}, {self.cell}; {rel}; impact {self.impact}; level {self.level}; "
            f"final sentence ok: {self.final_sentence_ok}"
        )


def _p_cell(region: str) -> str | None:
    row = 0 if _P_TOP.search(region) else 2 if _P_BOTTOM.search(region) else 1
    col = 0 if _P_LEFT.search(region) else 2 if _P_RIGHT.search(region) else 1
    if row == 1 and col == 1 and not _P_MIDDLE.search(region):
        return None
    return CELLS[3 * row + col]


def parse_description(text: str) -> ParsedDescription:
    """Read cell, orientation, relations, impact and level back from a paragraph.

    An independent regex parser of the answer format (see the module docstring): it shares
    nothing with :func:`describe` but the vocabulary, so a round trip checks the describer.

    Parameters
    ----------
    text : str

    Returns
    -------
    ParsedDescription

    Examples
    --------
    >>> p = parse_description("The watermark runs vertically across the image. It is located in "
    ...     "the lower-left corner of the image. As for the cat, it does not touch it. "
    ...     "The watermark visibility is: obvious.")
    >>> p.orientation, p.cell, p.relations, p.level, p.final_sentence_ok
    ('vertical', 'Bottom-left', (('cat', 'separate'),), 'obvious', True)
    """
    if not isinstance(text, str):
        raise InputError.bad("text", "a string", text)
    sentences = [s for s in _P_SENTENCE_SPLIT.split(text.strip()) if s]
    last = sentences[-1] if sentences else ""
    final = _P_FINAL.fullmatch(last)
    final_ok = bool(final) and text.endswith(last)
    present = not _P_ABSENT.search(text)
    orientation = cell = impact = None
    relations: list[tuple[str, str]] = []
    for sentence in sentences[:-1] if final else sentences:
        rel = _P_RELATION.match(sentence)
        if rel:
            kind = next((k for k, pat in _P_RELATION_KIND if pat.search(rel.group(2))), None)
            if kind is not None:
                relations.append((rel.group(1).strip(), kind))
            continue
        if orientation is None and (o := _P_ORIENTATION.search(sentence)):
            orientation = o.group(1).lower()
        if cell is None and (w := _P_WHERE.search(sentence)):
            cell = _p_cell(w.group(1))
        if impact is None and _P_CONTENT.search(sentence):
            impact = next((k for k, pat in _P_IMPACT if pat.search(sentence)), None)
    return ParsedDescription(
        present=present,
        cell=cell if present else None,
        orientation=orientation if present else None,
        relations=tuple(relations),
        level=final.group(1) if final else None,
        impact=impact,
        subject_estimated=bool(_P_ESTIMATED.search(text)),
        final_sentence_ok=final_ok,
    )
