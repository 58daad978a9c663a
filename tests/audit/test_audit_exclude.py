"""``run_audit(exclude=...)`` / ``trustlab audit --exclude COL``: columns the default models must
not use (a row id, a leaked outcome) are left out of their features, with a note; a column that
holds a different whole number on every row gets a note naming it as a possible row id; an
exclude that cannot apply (a pred column or a model: nothing is trained) or names no feature
column is refused naming it."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line, run_main
from trustlab.audit import run_audit
from trustlab.errors import InputError


def _table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"id": np.arange(500, 500 + n), "x": rng.normal(size=n),
                          "g": rng.choice(["a", "b"], n)})  # fmt: skip
    frame["y"] = np.where(frame.x + rng.normal(scale=0.5, size=n) > 0, "yes", "no")
    frame["leak"] = frame.y
    return frame


def test_excluded_columns_are_not_features_and_are_named(tmp_path):
    kept = run_audit(_table(), label="y", group="g", out=tmp_path / "a", sections=[])
    assert {"id", "leak"} <= set(kept.context.feature_names)
    assert any("Column 'id' holds a different whole number" in n for n in kept.context.notes)
    result = run_audit(_table(), label="y", group="g", out=tmp_path / "b", sections=[],
                       exclude=["id", "leak"])  # fmt: skip
    assert set(result.context.feature_names) == {"x"}
    assert "Columns left out of the features as asked (exclude): id, leak." in result.context.notes
    assert not any("row id does" in n for n in result.context.notes)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"exclude": ["nope"]}, "exclude: expected columns of the data, got 'nope'"),
     ({"exclude": ["y"]}, "exclude: expected columns other than the label, group and pred, got 'y'"),
     ({"exclude": ["id", "id"]}, "exclude: expected each column once, got 'id'"),
     ({"exclude": "id"}, "exclude: expected a list of column names, got 'id'"),
     ({"exclude": ["id"], "pred": "leak"},
      "exclude: expected no columns to leave out with a pred column (no model is trained)")],
)  # fmt: skip
def test_an_exclude_that_cannot_apply_is_refused(tmp_path, kwargs, message):
    with pytest.raises(InputError) as exc:
        run_audit(_table(), label="y", group="g", out=tmp_path, sections=[], **kwargs)
    assert str(exc.value).startswith(message)


def test_a_short_table_gets_no_row_id_note(tmp_path):
    result = run_audit(_table(19), label="y", group="g", out=tmp_path, sections=[])
    assert not any("row id does" in n for n in result.context.notes)


def test_the_command_line_option_repeats(tmp_path, capsys):
    _table().to_csv(tmp_path / "t.csv", index=False)
    base = ["audit", "--data", tmp_path / "t.csv", "--label", "y", "--group", "g"]
    code, out, err = run_main([*base, "--exclude", "id", "--exclude", "leak", "--out",
                               tmp_path / "o", "--json"], capsys)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["notes"][0].startswith("Columns left out of the features as asked")
    code, out, err = run_main([*base, "--pred", "leak", "--exclude", "id", "--out",
                               tmp_path / "p"], capsys)  # fmt: skip
    assert (code, out) == (2, "")
    assert one_line(err).startswith(
        "trustlab: error: --exclude: expected no columns to leave out with a pred column"
    )
