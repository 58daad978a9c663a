"""Review 64: extract_code took a block fenced with ``~~~`` (CommonMark's other fence) for
prose and returned the whole answer, fences and all; a ``~~~`` block now reads as a ``````
block does, and each fence closes only on its own character."""

from __future__ import annotations

from trustlab.safety.misuse import extract_code


def test_a_tilde_fenced_block_is_code():
    assert extract_code("Here:\n~~~python\nx = 1\n~~~\nDone.") == "x = 1\n"
    assert extract_code("~~~~\nprint(1)\n~~~~\n") == "print(1)\n"
    assert extract_code("~~~\nx = 1\n") == "x = 1\n"  # left open: to the end


def test_a_fence_closes_only_on_its_own_character():
    text = "~~~python\ns = '''\n```\n'''\n~~~\n"
    assert extract_code(text) == "s = '''\n```\n'''\n"
    assert extract_code("```python\ny = 2\n~~~\n```\n") == "y = 2\n~~~\n"
