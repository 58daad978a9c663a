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


def test_a_data_file_changed_since_the_run_is_named_not_shown(tmp_path):
    # review 58 (evals F3): the panel showed the edited file's statistics under the run's caption
    from trustlab.evals.registry import DATA_DIGESTS, data_digests

    path = tmp_path / "cb.json"
    records = synthetic_casebench().records()
    path.write_text(json.dumps(records))
    meta = {"data": str(path), DATA_DIGESTS: data_digests({"data": str(path)})}
    log = SimpleNamespace(location=str(tmp_path / "run1.eval"), eval=SimpleNamespace(metadata=meta))
    assert [b for b in _human_panel([log]) if isinstance(b, ReportTable)]  # unchanged: shown
    for record in records:  # valid JSON still, another data set
        if not record["context_intended_to_be_safe"]:
            record["safe_rate"], record["scores"] = 1.0, None
    path.write_text(json.dumps(records))
    blocks = _human_panel([log, _log(str(path))])  # a log without a digest cannot tell
    assert not [b for b in blocks if isinstance(b, ReportTable)]
    (text,) = [b.text for b in blocks if isinstance(b, ReportText)]
    assert text == f"Human statistics: {path} changed since the run (run1.eval); not shown."
