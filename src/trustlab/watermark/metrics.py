"""WMarkGPT's text and score metrics, re-implemented (Tan et al., ICML 2025), with two defects fixed.

The authors scored a generated paragraph against its reference with

- **BLEU-1**: nltk ``sentence_bleu([reference.split()], candidate.split(), weights=(1,))``, i.e.
  whitespace tokens, clipped unigram precision, the brevity penalty, no smoothing
  (:func:`bleu1`);
- **ROUGE-L**: the F-measure of the ``rouge`` package 1.0.1, ``Rouge().get_scores(candidate,
  reference)[0]["rouge-l"]["f"]`` (:func:`rouge_l`; its definition is spelled out there);
- **ACC**: the reference level word tested for *substring membership* in a level word that a GPT
  extracted from the answer (so "visible" is found inside "invisible");
- **SRCC / PLCC** of the Q-Align-style expected score against ``gt_score``: plain
  ``scipy.stats.spearmanr`` and ``pearsonr`` (no logistic fit; ``evaluate/iqa_eval.py``).

Both texts were cleaned with ``text.strip('<\\s>')``: a *character-set* strip of ``<``, ``\\``,
``s`` and ``>`` at both ends, which leaves ``"...invisible.</"`` of ``"...invisible.</s>"`` and eats
a leading or trailing letter "s". :func:`clean_text` removes only whole end-of-sequence tokens by
default; ``compat=True`` reproduces the authors' strip (a compatibility mode, labelled as such).
:func:`parse_level` reads the level from the fixed final sentence ("exact" mode, the default);
``mode="substring"`` reproduces the authors' membership test, also labelled as such.

Nothing here needs nltk or rouge; they serve as oracles in the tests only.

Why this module is long: ROUGE-L's batched longest-common-subsequence tables, with the rouge
package's exact tie-breaking, take half of it; the rest are the two result classes that hold the
per-item values of every metric.

>>> round(bleu1("the cat sat on the mat", "the cat sat"), 4)
0.3679
>>> round(rouge_l("the cat sat on the mat", "the cat sat"), 4)
0.75
>>> parse_level("A faint logo. The watermark visibility is: invisible.")
'invisible'
>>> parse_level("invisible", mode="substring")
('invisible', 'visible')
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_bool, check_choice, check_string_list
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.watermark.vocabulary import LEVEL_SCORES, LEVELS

__all__ = [
    "END_TOKENS",
    "PARSE_MODES",
    "bleu1",
    "rouge_l",
    "clean_text",
    "parse_level",
    "level_accuracy",
    "srcc_plcc",
    "DescriptionScores",
    "score_descriptions",
    "VisibilityScores",
    "score_visibility",
]

#: The literal end/begin-of-sequence tokens :func:`clean_text` removes from either end of a text.
END_TOKENS: tuple[str, ...] = ("</s>", "<s>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<eos>")
#: The level-parsing modes: exact (the default) and the authors' substring membership.
PARSE_MODES: tuple[str, ...] = ("exact", "substring")

_AUTHORS_STRIP = "<\\s>"  # the characters of the authors' .strip('<\s>'): '<', '\\', 's', '>'
_LEVEL_WORDS = "|".join(LEVELS)
# The fixed final sentence, at the start of the text, after a sentence end (and closing quotes)
# and whitespace, or after whitespace holding a new line; ending the text. Possessive quantifiers,
# and a new-line run entered at its start only: "\s+\s*" and "\s*\.?\s*" backtracked
# quadratically (20,000 spaces after a full stop took 3 s); the same texts match.
_FINAL_SENTENCE = re.compile(
    r"(?:\A|(?<=[.!?:;])(?:\s*+[\"'\u201d\u2019)\]])*+(?=\s)|(?<!\s)(?=[^\S\n]*+\n))\s*+"
    rf"the\s++watermark\s++visibility\s++is\s*+:\s*+({_LEVEL_WORDS})\s*+\.?+\s*+\Z",
    re.IGNORECASE,
)
_BARE_LEVEL = re.compile(rf"\A\s*+({_LEVEL_WORDS})\s*+\.?+\s*+\Z", re.IGNORECASE)
_VERDICT = re.compile(r"visibility\s+is", re.IGNORECASE)


# ------------------------------------------------------------------ input checks


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError.bad(name, "a string", value)
    return value


def _pairs(reference: Any, candidate: Any) -> tuple[list[str], list[str], bool]:
    """Both strings (one pair) or both sequences of strings of one length (a batch)."""
    if isinstance(reference, str) or isinstance(candidate, str):
        return [_text(reference, "reference")], [_text(candidate, "candidate")], True
    refs = check_string_list(reference, "reference", what="reference texts")
    cands = check_string_list(candidate, "candidate", what="candidate texts")
    if len(refs) != len(cands):
        raise InputError.bad("candidate", f"{len(refs)} texts (one per reference)", len(cands))
    return refs, cands, False


def _levels(value: Any, name: str, n: int) -> list[str]:
    levels = check_string_list(value, name, what="level words")
    if len(levels) != n:
        raise InputError.bad(name, f"{n} level words (one per text)", len(levels))
    for i, level in enumerate(levels):
        if level not in LEVELS:
            raise InputError.bad(f"{name}[{i}]", f"one of {', '.join(LEVELS)}", level)
    return levels


# ------------------------------------------------------------------ cleaning and parsing


def clean_text(text: str, compat: bool = False) -> str:
    """A generated or reference paragraph without its end-of-sequence tokens.

    By default, whole tokens of :data:`END_TOKENS` (``</s>``, ``<|im_end|>``, ...) and whitespace
    are removed from both ends, repeatedly; nothing else is touched. ``compat=True`` is the
    authors' compatibility mode, ``text.strip('<\\s>')``: it strips the *characters* ``<``, ``\\``,
    ``s`` and ``>`` from both ends (so ``"...is: obvious.</s>"`` becomes ``"...is: obvious.</"``
    and ``"Dogs"`` becomes ``"Dog"``). Use it only to reproduce WMarkGPT's published numbers.

    Parameters
    ----------
    text : str
        The paragraph.
    compat : bool, default False
        Reproduce the authors' character-set strip instead.

    Returns
    -------
    str

    Examples
    --------
    >>> clean_text("Watermarks everywhere.</s>")
    'Watermarks everywhere.'
    >>> clean_text("Watermarks everywhere.</s>", compat=True)
    'Watermarks everywhere.</'
    """
    _text(text, "text")
    if check_bool(compat, "compat"):
        return text.strip(_AUTHORS_STRIP)
    out = text.strip()
    changed = True
    while changed:
        changed = False
        for token in END_TOKENS:
            if out.endswith(token):
                out, changed = out[: -len(token)].rstrip(), True
            if out.startswith(token):
                out, changed = out[len(token) :].lstrip(), True
    return out


def parse_level(text: str, mode: str = "exact") -> str | tuple[str, ...] | None:
    """The visibility level a paragraph states.

    ``mode="exact"`` (the default): after :func:`clean_text`, the text must *end* with the fixed
    final sentence ``The watermark visibility is: L.``, where L is one of the five level words as
    a whole token. The sentence must start the text or follow a sentence end (``. ! ? : ;``,
    optionally followed by closing quotes or brackets) and whitespace, or a new line; case, the spacing around ``is`` and ``:`` and the closing period
    are free; nothing but whitespace may follow. A text that is a bare level word (``"faint"``,
    ``"Faint."``), as a level extractor returns, is read as that level. Anything else (no final
    sentence, another sentence after it, two words, markdown around the word) gives ``None``.

    ``mode="substring"`` is the authors' compatibility mode: the tuple of every level (in
    :data:`~trustlab.watermark.vocabulary.LEVELS` order) whose word occurs as a case-sensitive
    *substring* in the text after the last "visibility is" (or in the whole text when that phrase is
    absent). WMarkGPT counted an answer right when the reference level was in such a text, so
    "visible" is matched inside "invisible": ``parse_level("invisible", "substring")`` gives
    ``('invisible', 'visible')``.

    Parameters
    ----------
    text : str
        A generated paragraph, or an extracted level word.
    mode : {"exact", "substring"}, default "exact"

    Returns
    -------
    str or None (exact), or tuple of str (substring)

    Examples
    --------
    >>> parse_level("Slightly faint. The watermark visibility is: faint.</s>")
    'faint'
    >>> parse_level("The watermark visibility is: faint. It covers the dog.") is None
    True
    >>> parse_level("The watermark visibility is: invisible.", mode="substring")
    ('invisible', 'visible')
    """
    _text(text, "text")
    check_choice(mode, "mode", PARSE_MODES)
    if mode == "substring":
        found = list(_VERDICT.finditer(text))
        span = text[found[-1].end() :] if found else text
        return tuple(level for level in LEVELS if level in span)
    cleaned = clean_text(text)
    match = _FINAL_SENTENCE.search(cleaned) or _BARE_LEVEL.match(cleaned)
    return match.group(1).lower() if match else None


def level_accuracy(
    predicted_texts: Sequence[str], reference_levels: Sequence[str], mode: str = "exact"
) -> float:
    """The fraction of texts whose stated level is the reference level.

    ``mode="exact"``: :func:`parse_level` must return the reference level (a text without the final
    sentence counts as wrong). ``mode="substring"``: the authors' compatibility mode, right when
    the reference level word occurs as a substring (see :func:`parse_level`); it is never lower than
    the exact accuracy on bare level words and can be higher ("visible" inside "invisible").

    Parameters
    ----------
    predicted_texts : sequence of str
        Generated paragraphs (or extracted level words).
    reference_levels : sequence of str
        One level of :data:`~trustlab.watermark.vocabulary.LEVELS` per text.
    mode : {"exact", "substring"}, default "exact"

    Returns
    -------
    float

    Examples
    --------
    >>> texts = ["The watermark visibility is: invisible.", "visible"]
    >>> level_accuracy(texts, ["visible", "visible"]), level_accuracy(["invisible"], ["visible"],
    ...     mode="substring")
    (0.5, 1.0)
    """
    texts = check_string_list(predicted_texts, "predicted_texts", what="texts")
    levels = _levels(reference_levels, "reference_levels", len(texts))
    check_choice(mode, "mode", PARSE_MODES)
    return float(np.mean(_level_hits(texts, levels, mode)))


def _level_hits(texts: list[str], levels: list[str], mode: str) -> np.ndarray:
    if mode == "exact":
        return np.array([parse_level(t) == lv for t, lv in zip(texts, levels, strict=True)])
    return np.array(
        [lv in parse_level(t, "substring") for t, lv in zip(texts, levels, strict=True)]
    )


# ------------------------------------------------------------------ BLEU-1


def bleu1(reference: str | Sequence[str], candidate: str | Sequence[str]) -> Any:
    """Sentence BLEU-1 exactly as WMarkGPT computed it with nltk.

    Tokens are ``str.split()`` (whitespace, punctuation kept on the words); the score is
    ``BP * exp(log(P1))`` with ``P1`` the clipped unigram precision (each candidate token counts at
    most as often as it occurs in the reference, divided by the candidate length ``c``) and the
    brevity penalty ``BP = 1`` if ``c > r`` else ``exp(1 - r / c)`` (``r`` the reference length).
    No smoothing: no common token gives 0, as does an empty candidate.

    Parameters
    ----------
    reference, candidate : str, or sequences of str of one length
        One pair gives a float; two sequences give an array of one score per pair (the batched
        form: one pass over plain counters, no nltk objects).

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(bleu1("a b c d", "a b x"), 6)
    0.477688
    >>> bleu1(["a b", "a"], ["a b", "b"]).tolist()
    [1.0, 0.0]
    """
    refs, cands, single = _pairs(reference, candidate)
    out = np.empty(len(refs))
    for k, (ref, cand) in enumerate(zip(refs, cands, strict=True)):
        r_tokens, c_tokens = ref.split(), cand.split()
        c = len(c_tokens)
        clipped = sum((Counter(c_tokens) & Counter(r_tokens)).values())
        if clipped == 0:
            out[k] = 0.0
            continue
        r = len(r_tokens)
        bp = 1.0 if c > r else math.exp(1 - r / c)
        out[k] = bp * math.exp(math.log(clipped / c))
    return float(out[0]) if single else out


# ------------------------------------------------------------------ ROUGE-L


def _sentences(text: str) -> list[list[str]]:
    """The ``rouge`` package's split: on every '.', keeping non-empty pieces; a whitespace-only
    piece is one empty-string token."""
    return [piece.split() or [""] for piece in text.split(".") if piece]


def rouge_l(reference: str | Sequence[str], candidate: str | Sequence[str]) -> Any:
    """ROUGE-L F-measure exactly as the ``rouge`` package 1.0.1 computes it (WMarkGPT's ROUGE-L).

    The definition of ``Rouge().get_scores(candidate, reference)[0]["rouge-l"]["f"]``:

    1. each text is split into sentences on every ``"."`` (empty pieces dropped), each sentence into
       whitespace tokens (a whitespace-only piece is the one token ``""``);
    2. ``m`` and ``n`` are the numbers of *distinct* tokens of the reference and the candidate;
    3. for every (reference sentence, candidate sentence) pair, one longest common subsequence is
       traced back through the usual dynamic-programming table from the bottom-right corner
       (a match goes diagonally; otherwise up if the cell above is strictly larger, else left);
    4. ``L`` is the number of distinct tokens over all these traced subsequences (the "union LCS",
       accumulated as a set across all reference sentences);
    5. ``P = L / n``, ``R = L / m``, ``F = 2 P R / (P + R + 1e-8)`` (beta 1, the package's 1e-8).

    Where the package raises (a text with no sentence: empty, or only full stops) this returns 0.

    The batched form (two sequences) fills the tables of all sentence pairs of all items at once
    with numpy, row by row (``T[i] = cummax(max(T[i-1], match * (T[i-1] shifted + 1)))``), and
    traces all subsequences back in parallel.

    Parameters
    ----------
    reference, candidate : str, or sequences of str of one length

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(rouge_l("a b c. d e", "a c. e f"), 6)
    0.666667
    """
    refs, cands, single = _pairs(reference, candidate)
    out = _rouge_l_batch(refs, cands)
    return float(out[0]) if single else out


def _rouge_l_batch(refs: list[str], cands: list[str]) -> np.ndarray:
    vocab: dict[str, int] = {}

    def ids(tokens: list[str]) -> list[int]:
        return [vocab.setdefault(t, len(vocab)) for t in tokens]

    m = np.zeros(len(refs))
    n = np.zeros(len(refs))
    pair_item: list[int] = []
    x_rows: list[list[int]] = []
    y_rows: list[list[int]] = []
    for k, (ref, cand) in enumerate(zip(refs, cands, strict=True)):
        r_sents = [ids(s) for s in _sentences(ref)]
        c_sents = [ids(s) for s in _sentences(cand)]
        if not r_sents or not c_sents:
            continue
        m[k] = len({t for s in r_sents for t in s})
        n[k] = len({t for s in c_sents for t in s})
        for rs in r_sents:
            for cs in c_sents:
                pair_item.append(k)
                x_rows.append(rs)
                y_rows.append(cs)
    llcs = np.zeros(len(refs))
    if pair_item:
        items = np.asarray(pair_item)
        words = _union_lcs_words(x_rows, y_rows)  # (pair, token id) of every traced match
        if len(words):
            v = len(vocab)
            keys = np.unique(items[words[:, 0]] * v + words[:, 1])
            llcs = np.bincount(keys // v, minlength=len(refs)).astype(float)
    out = np.zeros(len(refs))
    for k in range(len(refs)):  # the package's float operations, in its order
        if m[k] and n[k] and llcs[k]:
            r_lcs = llcs[k] / m[k]
            p_lcs = llcs[k] / n[k]
            out[k] = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    return out


def _union_lcs_words(
    x_rows: list[list[int]], y_rows: list[list[int]], chunk_cells: int = 4_000_000
) -> np.ndarray:
    """(pair index, token id) of each match on the traced-back LCS of every pair ``(x, y)``.

    Pairs are sorted by length and processed in chunks of at most ``chunk_cells`` table cells.
    """
    lx = np.array([len(r) for r in x_rows])
    ly = np.array([len(r) for r in y_rows])
    order = np.lexsort((ly, lx))
    found: list[np.ndarray] = []
    start = 0
    while start < len(order):
        stop, cols = start + 1, ly[order[start]] + 1
        while stop < len(order):
            cols = max(cols, ly[order[stop]] + 1)
            if (stop + 1 - start) * (lx[order[stop]] + 1) * cols > chunk_cells:
                break
            stop += 1
        idx = order[start:stop]
        pairs = _trace_chunk([x_rows[i] for i in idx], [y_rows[i] for i in idx])
        pairs[:, 0] = idx[pairs[:, 0]]
        found.append(pairs)
        start = stop
    return np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)


def _trace_chunk(xs: list[list[int]], ys: list[list[int]]) -> np.ndarray:
    p = len(xs)
    lx = np.array([len(r) for r in xs])
    ly = np.array([len(r) for r in ys])
    wx, wy = int(lx.max()), int(ly.max())
    x = np.full((p, wx), -1, dtype=np.int64)  # padding never matches (-1 vs -2)
    y = np.full((p, wy), -2, dtype=np.int64)
    for i, (a, b) in enumerate(zip(xs, ys, strict=True)):
        x[i, : len(a)] = a
        y[i, : len(b)] = b
    table = np.zeros((p, wx + 1, wy + 1), dtype=np.int32)
    for i in range(1, wx + 1):
        prev = table[:, i - 1, :]
        diag = np.where(x[:, i - 1, None] == y, prev[:, :-1] + 1, 0)
        table[:, i, 1:] = np.maximum.accumulate(np.maximum(prev[:, 1:], diag), axis=1)
    # Trace back every pair at once from its own corner (padding lies outside the traced region).
    i, j = lx.copy(), ly.copy()
    active = np.nonzero((i > 0) & (j > 0))[0]
    hits_pair: list[np.ndarray] = []
    hits_word: list[np.ndarray] = []
    while len(active):
        ii, jj = i[active], j[active]
        xw = x[active, ii - 1]
        match = xw == y[active, jj - 1]
        hits_pair.append(active[match])
        hits_word.append(xw[match])
        up = table[active, ii - 1, jj] > table[active, ii, jj - 1]
        i[active] -= match | up
        j[active] -= match | ~up
        active = active[(i[active] > 0) & (j[active] > 0)]
    if not hits_pair:
        return np.zeros((0, 2), dtype=np.int64)
    return np.stack([np.concatenate(hits_pair), np.concatenate(hits_word)], axis=1)


# ------------------------------------------------------------------ SRCC / PLCC


def _scores(value: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a 1-D array of numbers", value) from None
    if arr.ndim != 1 or arr.size < 2:
        raise InputError.bad(name, "a 1-D array of at least 2 numbers", arr)
    if not np.all(np.isfinite(arr)):
        raise InputError.bad(name, "finite numbers", "NaN or infinity")
    return arr


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if np.all(a == a[0]) or np.all(b == b[0]):  # constant: its centred copy need not be 0
        return math.nan
    da, db = a - a.mean(), b - b.mean()
    da, db = da / (np.abs(da).max() or 1.0), db / (np.abs(db).max() or 1.0)  # norms in range
    na, nb = np.linalg.norm(da), np.linalg.norm(db)  # >= 1: neither side is constant
    return float(np.clip(np.dot(da / na, db / nb), -1.0, 1.0))


def srcc_plcc(predicted_scores: Any, gt_scores: Any) -> tuple[float, float]:
    """Spearman (SRCC) and Pearson (PLCC) correlation of predicted and ground-truth scores.

    As WMarkGPT computed them (``scipy.stats.spearmanr`` and ``pearsonr`` on the raw scores, no
    logistic mapping): SRCC is the Pearson correlation of average ranks (ties share their mean
    rank). A constant input gives NaN.

    Parameters
    ----------
    predicted_scores, gt_scores : array-like of shape (n,), n >= 2

    Returns
    -------
    (float, float)
        SRCC and PLCC.

    Examples
    --------
    >>> [round(v, 6) for v in srcc_plcc([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 2.0, 9.0])]
    [0.948683, 0.838116]
    """
    from scipy.stats import rankdata

    pred = _scores(predicted_scores, "predicted_scores")
    gt = _scores(gt_scores, "gt_scores")
    if len(pred) != len(gt):
        raise InputError.bad("gt_scores", f"{len(pred)} scores (one per prediction)", len(gt))
    srcc = _pearson(rankdata(pred), rankdata(gt))
    return srcc, _pearson(pred, gt)


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class DescriptionScores(Result):
    """BLEU-1, ROUGE-L and level accuracy of generated paragraphs against references.

    ``accuracy_exact`` parses the fixed final sentence (:func:`parse_level`); ``accuracy_substring``
    is the authors' membership test (compatibility mode); both are None without reference levels.
    ``compat`` tells whether the texts were cleaned with the authors' character-set strip.
    """

    n: int
    bleu1_mean: float
    rouge_l_mean: float
    accuracy_exact: float | None
    accuracy_substring: float | None
    mode: str
    compat: bool
    bleu1: np.ndarray = internal_field()
    rouge_l: np.ndarray = internal_field()
    parsed_levels: tuple[str | None, ...] = internal_field()

    @property
    def accuracy(self) -> float | None:
        """The accuracy of the chosen ``mode``."""
        return self.accuracy_exact if self.mode == "exact" else self.accuracy_substring

    def summary(self) -> str:
        lines = [
            f"DescriptionScores (n = {self.n}{', authors compat cleaning' if self.compat else ''})",
            f"  BLEU-1  {self.bleu1_mean:.4f}",
            f"  ROUGE-L {self.rouge_l_mean:.4f}",
        ]
        if self.accuracy_exact is not None:
            lines.append(f"  level accuracy, exact parse      {self.accuracy_exact:.4f}")
            lines.append(f"  level accuracy, substring (compat) {self.accuracy_substring:.4f}")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Histograms of the per-item BLEU-1 and ROUGE-L."""
        ax = new_axes(ax)
        bins = np.linspace(0.0, 1.0, 21)
        ax.hist(self.bleu1, bins=bins, alpha=0.6, label=f"BLEU-1 (mean {self.bleu1_mean:.3f})")
        ax.hist(self.rouge_l, bins=bins, alpha=0.6, label=f"ROUGE-L (mean {self.rouge_l_mean:.3f})")
        ax.set_xlabel("score")
        ax.set_ylabel("paragraphs")
        ax.set_title(f"Description scores (n = {self.n})")
        ax.legend()
        return ax


def score_descriptions(
    references: Sequence[str],
    answers: Sequence[str],
    *,
    reference_levels: Sequence[str] | None = None,
    mode: str = "exact",
    compat: bool = False,
) -> DescriptionScores:
    """Score generated paragraphs against reference paragraphs as WMarkGPT did.

    Both texts are cleaned with :func:`clean_text` (``compat`` selects the authors' character-set
    strip, which their published BLEU-1/ROUGE-L used), then scored with :func:`bleu1` and
    :func:`rouge_l`. With ``reference_levels``, the level accuracy is computed both ways from the
    answers as given (:func:`level_accuracy`; the parse removes end tokens itself).

    Parameters
    ----------
    references, answers : sequences of str of one length
    reference_levels : sequence of str, optional
        The reference level of each item.
    mode : {"exact", "substring"}, default "exact"
        Which accuracy :attr:`DescriptionScores.accuracy` reports (both are stored).
    compat : bool, default False

    Returns
    -------
    DescriptionScores

    Examples
    --------
    >>> ref = "A faint logo at the top. The watermark visibility is: faint."
    >>> res = score_descriptions([ref], [ref + "</s>"], reference_levels=["faint"])
    >>> res.bleu1_mean, res.accuracy_exact
    (1.0, 1.0)
    """
    refs = check_string_list(references, "references", what="reference texts")
    answers_ = check_string_list(answers, "answers", what="answer texts")
    if len(refs) != len(answers_):
        raise InputError.bad("answers", f"{len(refs)} texts (one per reference)", len(answers_))
    check_choice(mode, "mode", PARSE_MODES)
    compat = check_bool(compat, "compat")
    levels = (
        None
        if reference_levels is None
        else _levels(reference_levels, "reference_levels", len(refs))
    )
    clean_refs = [clean_text(t, compat) for t in refs]
    clean_answers = [clean_text(t, compat) for t in answers_]
    b = bleu1(clean_refs, clean_answers)
    r = rouge_l(clean_refs, clean_answers)
    parsed = tuple(parse_level(t) for t in answers_)
    exact = substring = None
    if levels is not None:
        exact = float(np.mean([p == lv for p, lv in zip(parsed, levels, strict=True)]))
        substring = float(np.mean(_level_hits(answers_, levels, "substring")))
    return DescriptionScores(
        n=len(refs),
        bleu1_mean=float(np.mean(b)),
        rouge_l_mean=float(np.mean(r)),
        accuracy_exact=exact,
        accuracy_substring=substring,
        mode=mode,
        compat=compat,
        bleu1=b,
        rouge_l=r,
        parsed_levels=parsed,
    )


@dataclass(frozen=True)
class VisibilityScores(Result):
    """SRCC and PLCC of predicted visibility scores against ground truth (WMarkGPT's readout)."""

    srcc: float
    plcc: float
    n: int
    predicted: np.ndarray = internal_field()
    ground_truth: np.ndarray = internal_field()

    def summary(self) -> str:
        return f"VisibilityScores (n = {self.n}): SRCC {self.srcc:.4f}, PLCC {self.plcc:.4f}"

    def plot(self, ax: Any = None) -> Any:
        """Predicted against ground-truth scores, with the level boundaries."""
        ax = new_axes(ax)
        ax.scatter(self.ground_truth, self.predicted, s=8, alpha=0.6)
        for edge in (1.0, 2.0, 3.0, 4.0):
            ax.axvline(edge, color="0.85", lw=0.8, zorder=0)
            ax.axhline(edge, color="0.85", lw=0.8, zorder=0)
        ax.plot([0, 5], [0, 5], color="0.5", lw=0.8, ls="--")
        ax.set_xlim(0, 5)
        ax.set_ylim(0, 5)
        ax.set_xlabel("ground-truth score")
        ax.set_ylabel("predicted score")
        ax.set_title(f"SRCC {self.srcc:.3f}, PLCC {self.plcc:.3f} (n = {self.n})")
        return ax


def score_visibility(predicted_scores: Any, gt_scores: Any) -> VisibilityScores:
    """SRCC and PLCC of predicted scores against ground-truth scores (see :func:`srcc_plcc`).

    Parameters
    ----------
    predicted_scores, gt_scores : array-like of shape (n,), n >= 2

    Returns
    -------
    VisibilityScores

    Examples
    --------
    >>> round(score_visibility([4.9, 2.0, 3.1], [4.5, 1.5, 3.0]).srcc, 6)
    1.0
    """
    srcc, plcc = srcc_plcc(predicted_scores, gt_scores)
    pred = np.asarray(predicted_scores, dtype=np.float64)
    gt = np.asarray(gt_scores, dtype=np.float64)
    return VisibilityScores(srcc=srcc, plcc=plcc, n=len(pred), predicted=pred, ground_truth=gt)


def expected_score(logits: Any) -> float:
    """WMarkGPT's Q-Align-style score: ``sum softmax(logits) x [5, 4, 3, 2, 1]``.

    >>> round(expected_score([0.0, 0.0, 0.0, 0.0, 0.0]), 6)
    3.0
    """
    z = as_float_array(logits, "logits", shape=(len(LEVELS),))  # the 5 level words' logits
    with np.errstate(over="ignore"):  # a gap past the float range is -inf: its exp is 0 anyway
        p = np.exp(z - z.max())
    p /= p.sum()
    return float(p @ np.asarray(LEVEL_SCORES))
