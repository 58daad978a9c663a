"""Review 64 (diff review of b8bdbbcf): read_or_raise keeps every line of a library's message.

Keeping only the first line lost what scikit-learn puts on the next ones: a tree pickled by
another scikit-learn version says "node array from the pickle has an incompatible dtype:" and
gives the expected and found dtypes below it. xgboost's C++ stack trace and its JSON excerpt
(with the ^~~~ line marking a position) still stay out, and the message is one line.
"""

from pathlib import Path

import pytest

from trustlab._model_files import read_or_raise
from trustlab.errors import InputError


def _message(text):
    def load():
        raise ValueError(text)

    with pytest.raises(InputError) as caught:
        read_or_raise(load, Path("m.joblib"), "a pickled model", "--model")
    return str(caught.value)


def test_later_lines_kept_on_one_line():
    text = "node array from the pickle has an incompatible dtype:\n- expected: A\n- got     : B"
    assert _message(text) == (
        "--model: could not read m.joblib as a pickled model (ValueError: node array from the "
        "pickle has an incompatible dtype: - expected: A - got     : B)"
    )


def test_stack_trace_and_excerpt_left_out():
    text = (
        "[16:00:00] json.cc:409: Expecting: ',', got: 'EOF', around character position: 9\n"
        '    {"a": [1\n'
        "    ~~~~~~~^\n\nStack trace:\n  [bt] (0) libxgboost.so(+0x1) [0x1]\n"
    )
    assert _message(text) == (
        "--model: could not read m.joblib as a pickled model (ValueError: [16:00:00] json.cc:409: "
        "Expecting: ',', got: 'EOF', around character position: 9)"
    )
