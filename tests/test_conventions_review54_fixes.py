"""Fixes of the conventions leads of review 54 (L2-L4, L8-L10, L12-L13): each test fails on the
code before its fix."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError


@pytest.mark.parametrize(
    "call, argument, came",
    [
        (lambda f: f.average_weights("x"), "updates", "'x'"),
        (lambda f: f.average_weights(5), "updates", "5"),
        (lambda f: f.average_weights(["x"]), "updates[0]", "'x'"),
        (lambda f: f.average_weights([{"w": [1.0]}], keys="w"), "keys", "'w'"),
    ],
    ids=["string", "number", "string-update", "string-keys"],
)
def test_average_weights_refuses_what_is_not_a_sequence_of_mappings(call, argument, came):
    """L10: a string or a number as the updates raised TypeError ('string indices must be
    integers'); keys='w' was read as its characters."""
    from trustlab import federated

    with pytest.raises(InputError) as caught:
        call(federated)
    assert caught.value.argument == argument
    assert str(caught.value).startswith(f"{argument}: expected ")
    assert came in str(caught.value)


@pytest.mark.parametrize(
    "pieces, activations, argument",
    [
        (5, [1.0], "pieces"),
        ("ab", [1.0, 2.0], "pieces"),
        ([1], [1.0], "pieces[0]"),
        (["a"], ["x"], "activations"),
    ],
    ids=["number", "string", "number-piece", "text-activation"],
)
def test_highlight_refuses_pieces_that_are_not_strings(pieces, activations, argument):
    """L10: highlight(5, [1.0]) raised TypeError ("object of type 'int' has no len()")."""
    from trustlab.interpret import highlight

    with pytest.raises(InputError) as caught:
        highlight(pieces, activations)
    assert caught.value.argument == argument


def test_highlight_and_average_weights_still_take_what_they_took():
    import numpy as np

    from trustlab.federated import average_weights
    from trustlab.interpret import highlight

    assert highlight([], []) == ("", [])
    assert highlight(("a", "b"), np.array([0.0, 1.0])) == ("a<<b>>", [1])
    avg = average_weights(({"w": np.array([0.0])}, {"w": np.array([2.0])}), keys=("w",))
    assert avg["w"].tolist() == [1.0]
