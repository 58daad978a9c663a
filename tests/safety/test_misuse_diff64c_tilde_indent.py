"""Diff review 64 C: with ``~~~`` taken for a fence, a docstring's section underline indented in
code (``    Notes`` / ``    ~~~~~``) opened a block in an unfenced answer (the code was cut to the
lines after it) and closed a ``~~~python`` block early. CommonMark's fence is indented three
spaces at most; a deeper ``~~~`` line is text."""

from __future__ import annotations

from trustlab.safety.misuse import extract_code

CODE = 'def f():\n    """Add.\n\n    Notes\n    ~~~~~\n    ok\n    """\n    return 1\n'


def test_an_indented_tilde_underline_in_unfenced_code_is_code():
    assert extract_code(CODE) == CODE


def test_an_indented_tilde_underline_does_not_close_a_tilde_block():
    assert extract_code(f"Here:\n~~~python\n{CODE}~~~\nDone.") == CODE


def test_a_tilde_fence_indented_three_spaces_still_opens_and_closes():
    # the fence's indentation comes off its lines (CommonMark; review 65): 'x = 1' runs
    assert extract_code("1. Run:\n   ~~~python\n   x = 1\n   ~~~\n") == "x = 1\n"
