"""Review 65: extract_code on a block whose fence is indented (a list item) or holds an indented
fence (a docstring's example), as CommonMark reads them (markdown-it-py agreed on 20,000 random
answers): the opening's indentation comes off the lines, and a fence indented four or more
columns deeper than the opening is code."""

from trustlab.safety.misuse import extract_code

DOC = 'def f():\n    """Use it so:\n\n    ```\n    f()\n    ```\n    """\n    return 1\n'


def test_a_list_items_block_loses_the_items_indentation():
    # was '   import os\n   x = 1\n': an IndentationError, so a correct answer failed its tests
    text = "1. The module:\n   ```python\n   import os\n   x = 1\n\n   ```\n2. Done."
    assert extract_code(text) == "import os\nx = 1\n\n"


def test_a_nested_list_block_and_deeper_lines():
    text = "- a\n  - b\n    ```python\n    def f():\n        return 1\n    ```\n"
    assert extract_code(text) == "def f():\n    return 1\n"


def test_an_indented_fence_in_a_docstring_does_not_close_the_block():
    # was cut after 'Use it so:' (an unterminated docstring)
    assert extract_code(f"Here:\n```python\n{DOC}```\nDone.") == DOC


def test_a_closing_fence_three_columns_deeper_still_closes():
    assert extract_code("```python\nx = 1\n   ```\nafter") == "x = 1\n"
    assert extract_code(" ```python\n x = 1\n    ```\nafter") == "x = 1\n"
