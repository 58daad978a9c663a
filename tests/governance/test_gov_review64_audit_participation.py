"""run_audit(participation=...) turned its argument into a list of paths itself: a bytes path was
read byte by byte ("participation: expected an answers file's path or its mapping, got 97", its
first byte) and a number ended in a raw TypeError ("'int' object is not iterable"). assess()
refuses bytes as they came since 945c3215; the audit now does too, before any work."""

from __future__ import annotations

import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError

TABLE = pd.DataFrame({"y": ["a", "b"] * 20, "yhat": ["a", "b", "b", "a"] * 10,
                      "g": ["u", "u", "v", "v"] * 10})  # fmt: skip


@pytest.mark.parametrize(
    ("files", "got"), [(b"a.yaml", r"bytes b'a\.yaml'"), (bytearray(b"a"), "bytearray"), (5, "5")]
)
def test_participation_that_is_no_path_or_paths_is_refused_as_it_came(tmp_path, files, got):
    expected = r"^participation: expected a path or a sequence of answers files' paths, got "
    with pytest.raises(InputError, match=expected + got):
        run_audit(TABLE, label="y", group="g", pred="yhat", out=tmp_path / "out",
                  sections=["overview"], participation=files)  # fmt: skip
    assert not (tmp_path / "out").exists()  # checked before any work
