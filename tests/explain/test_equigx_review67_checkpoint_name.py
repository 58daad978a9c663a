"""A checkpoint name that is a list or a dict is refused in words (review 67).

Measured on 1b2aaee5: ``checkpoint_info(["a"])`` and ``load_checkpoint({})`` stopped on Python's
``TypeError: unhashable type: 'list'`` (the name was looked up in the dict of checkpoints); a
string that is no checkpoint already gave the InputError naming ``name``. Now every non-string
name gives that InputError.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.equigx.checkpoints import checkpoint_info, load_checkpoint  # noqa: E402


@pytest.mark.parametrize("name", [["shapes_platonic"], {}, {"a": 1}])
def test_an_unhashable_checkpoint_name_is_refused(name):
    for call in (checkpoint_info, load_checkpoint):
        with pytest.raises(InputError, match=r"^name: expected one of") as info:
            call(name)
        assert info.value.argument == "name"
