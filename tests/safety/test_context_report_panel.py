"""The human-statistics panel of the casebench report when a log's data file changed after the
run: the report says so instead of failing as a whole."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

pytest.importorskip("inspect_ai")
from trustlab.evals.casebench import _human_panel  # noqa: E402
from trustlab.evals.logs import ReportTable, ReportText  # noqa: E402
from trustlab.safety.context import synthetic_casebench  # noqa: E402


def _log(data: str) -> SimpleNamespace:
    return SimpleNamespace(eval=SimpleNamespace(metadata={"data": data}))


def test_a_data_file_that_became_invalid_is_reported_not_raised(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(synthetic_casebench().records()))
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")  # valid when the run started, overwritten since
    blocks = _human_panel([_log(str(bad)), _log(str(good)), _log(str(tmp_path / "gone.json"))])
    texts = [b.text for b in blocks if isinstance(b, ReportText)]
    assert any(
        str(bad) in t and "not available" in t and "expected a JSON object" in t for t in texts
    )
    assert any("gone.json is no longer readable" in t for t in texts)
    tables = [b for b in blocks if isinstance(b, ReportTable)]
    assert len(tables) == 1 and str(good) in tables[0].caption


def test_a_data_set_without_context_effect_has_a_panel(tmp_path):
    records = synthetic_casebench().records()
    for record in records:
        record["safe_rate"], record["scores"] = 10 / 21, None
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(records))
    (table,) = [b for b in _human_panel([_log(str(flat))]) if isinstance(b, ReportTable)]
    cells = dict(table.rows)
    assert cells["Wilcoxon p"] == "n/a" and cells["power with 21 votes"] == "n/a"
