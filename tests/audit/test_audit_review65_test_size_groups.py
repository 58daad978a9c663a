"""Review 65: ``trustlab audit --test-size 0.005`` on a table of two large groups was refused
with 'group: expected at least 2 groups in the audited rows (the 2 test rows) ...', naming
--group, which was fine; the held-out share was too small. Now the error names test_size (a
group of one row still names group: tests/audit/test_audit_run.py)."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError


def test_a_test_share_too_small_for_two_groups_names_test_size(tmp_path):
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {"x": rng.normal(size=40), "y": [0, 1] * 20, "g": ["a", "a", "b", "b"] * 10}
    )
    with pytest.raises(InputError) as info:  # 1 test row: one group only, whichever it is
        run_audit(table, label="y", group="g", out=tmp_path / "o", test_size=0.025, sections=[])
    assert info.value.argument == "test_size"
    assert str(info.value).startswith(
        "test_size: expected a held-out share whose test rows hold 2 or more groups"
    )
    assert "got 0.025 (the 1 test rows hold only" in str(info.value)
    assert "the smallest group has 20 of 40 rows" in str(info.value)
    assert not (tmp_path / "o").exists()
