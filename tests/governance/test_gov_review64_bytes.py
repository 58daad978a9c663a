"""A bytes path given to assess() was read byte by byte: b"a.yaml" was refused as
"answers[0]: expected an answers file's path or its mapping, got 97" (its first byte)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.governance import assess


def test_a_bytes_path_is_refused_as_what_came():
    with pytest.raises(InputError, match=r"^answers: expected a path, .*got bytes b'a\.yaml'"):
        assess(b"a.yaml")
