"""The token loop's text side without a model: stop strings, held-back text, seeds, entries.

A character "tokenizer" (token id = code point, 0 = end of sequence) makes every expectation
readable; the model side of the loop is tested on SmolLM2 in test_local and test_openai_client.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.llm._decoding import (
    DecodeRequest,
    TokenLogprob,
    _find_stop,
    _Row,
    _safe_end,
    row_seed,
)


class CharTokenizer:
    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)


class CharModel:
    tokenizer = CharTokenizer()
    _eos_ids = 0


def feed(text: str, *, stop=(), max_new_tokens=100, eos=False, logprobs=False):
    """Push ``text`` one character at a time; the steps reported, up to the finishing one."""
    row = _Row(0, DecodeRequest((1,), max_new_tokens, stop=tuple(stop)), CharModel(), None)
    steps = []
    for char in text + ("\0" if eos else ""):
        entry = TokenLogprob(char, -1.0) if logprobs else None
        step = row.push(ord(char), entry)
        if step is not None:
            steps.append(step)
            if step.finish_reason is not None:
                break
    return steps


def test_text_is_sent_as_it_comes_and_the_budget_ends_it():
    steps = feed("abcdef", max_new_tokens=4)
    assert [s.text for s in steps] == ["a", "b", "c", "d"]
    assert steps[-1].finish_reason == "length" and steps[-1].n_tokens == 4


def test_end_of_sequence_finishes_with_stop_and_is_counted_but_not_shown():
    steps = feed("ab", eos=True)
    assert "".join(s.text for s in steps) == "ab"
    assert steps[-1].finish_reason == "stop" and steps[-1].n_tokens == 3


def test_a_stop_string_cuts_the_text_before_it():
    steps = feed("Hello. World", stop=[". "])
    assert "".join(s.text for s in steps) == "Hello"
    assert steps[-1].finish_reason == "stop"


def test_text_that_may_start_a_stop_string_is_held_back_until_it_cannot():
    steps = feed("ab<x>cd<end>zz", stop=["<end>"])
    # "<" waits until "x" shows it does not start "<end>"; "<en" waits and is cut with "d"
    assert [s.text for s in steps] == ["a", "b", "<x", ">", "c", "d", ""]
    assert steps[-1].finish_reason == "stop"


def test_a_partial_character_is_held_back():
    assert _safe_end("ab\ufffd", []) == 2
    assert _safe_end("ab\ufffd\ufffd", ["zz"]) == 2


@pytest.mark.parametrize(
    ("text", "stops", "before", "expected"),
    [
        ("hello world", ["o w"], 0, 4),
        ("hello world", ["o", "w"], 0, 4),
        ("hello world", ["x"], 0, None),
        ("hello world", ["o"], 6, 7),  # only occurrences ending after `before` count
    ],
)
def test_find_stop(text, stops, before, expected):
    assert _find_stop(text, stops, before) == expected


def test_log_probability_entries_follow_the_text_they_belong_to():
    steps = feed("ab<x>c<end>", stop=["<end>"], logprobs=True)
    entries = [e.token for s in steps for e in s.logprobs]
    assert entries == list("ab<x>c")  # the stop string's tokens are left out
    held = next(s for s in steps if s.text == "<x")
    assert [e.token for e in held.logprobs] == ["<", "x"]


def test_row_seeds_differ_per_choice_and_repeat():
    assert row_seed(None, 3) is None
    assert row_seed(7, 0) == row_seed(7, 0)
    assert len({row_seed(7, c) for c in range(5)} | {row_seed(8, 0)}) == 6


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab c", max_size=30),
    stops=st.lists(st.text(alphabet="ab c", min_size=1, max_size=3), max_size=3),
    budget=st.integers(1, 40),
)
def test_streamed_pieces_join_to_the_text_cut_at_the_first_stop(text, stops, budget):
    steps = feed(text, stop=stops, max_new_tokens=budget)
    produced = text[:budget]
    expected = produced
    for k in range(1, len(produced) + 1):  # the first stop string to be complete ends the text
        cuts = [i for s in stops if (i := produced[:k].find(s)) >= 0]
        if cuts:
            expected = produced[: min(cuts)]
            break
    joined = "".join(s.text for s in steps)
    if steps and steps[-1].finish_reason is not None:
        assert joined == expected
        assert not any(s in joined for s in stops)
    else:  # the text ran out first: nothing that could still be a stop string was sent
        assert expected.startswith(joined)


class ByteTokenizer:
    """Token id = one UTF-8 byte; a partial character decodes to U+FFFD (as byte-level BPE)."""

    def decode(self, ids, skip_special_tokens=True):
        return bytes(ids).decode("utf-8", errors="replace")


class ByteModel:
    tokenizer = ByteTokenizer()
    _eos_ids = None


def feed_bytes(text: str, *, stop=(), logprobs=False):
    row = _Row(0, DecodeRequest((1,), 100, stop=tuple(stop)), ByteModel(), None)
    steps = []
    for byte in text.encode():
        step = row.push(byte, TokenLogprob(chr(byte), -1.0) if logprobs else None)
        if step is not None:
            steps.append(step)
            if step.finish_reason is not None:
                break
    return steps


@pytest.mark.parametrize(
    ("text", "stop", "expected"),
    [
        ("\U0001f426\U0001f426\U0001f426", "\U0001f426", ""),
        ("ab \U0001f426\U0001f426 cd", "\U0001f426\U0001f426", "ab "),
        ("Zürich, Köln", "ö", "Zürich, K"),
        ("€€x€", "x", "€€"),
    ],
)
def test_a_stop_string_completed_by_the_bytes_of_a_character_is_found(text, stop, expected):
    # a character made of several tokens shows as U+FFFD until its last byte arrives; the stop
    # search must still see the whole character once it is complete
    steps = feed_bytes(text, stop=[stop], logprobs=True)
    assert "".join(s.text for s in steps) == expected
    assert steps[-1].finish_reason == "stop"
