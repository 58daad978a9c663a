"""A report of some sections says which were asked (review 57): with ``sections=["overview"]``
(``--section overview``) report.json read as a whole audit, ``complete: true`` and nothing
telling that the fairness section was left out on purpose."""

import json

import numpy as np
import pandas as pd

from trustlab.audit import run_audit


def _table():
    rng = np.random.default_rng(31)
    n = 40
    y = rng.choice(["no", "yes"], size=n)
    pred = np.where(rng.random(n) < 0.8, y, rng.choice(["no", "yes"], size=n))
    return pd.DataFrame({"y": y, "g": rng.choice(["p", "q"], size=n), "yhat": pred})


def test_the_sections_asked_are_in_the_meta_and_the_page_header(tmp_path):
    result = run_audit(
        _table(), label="y", group="g", pred="yhat", out=tmp_path, sections=["overview"]
    )
    report = json.loads(result.json_path.read_text())
    assert [s["id"] for s in report["sections"]] == ["overview"]
    assert report["meta"]["sections_asked"] == ["overview"]
    assert "Sections asked" in result.html_path.read_text()


def test_a_whole_audit_has_no_sections_asked(tmp_path):
    result = run_audit(_table(), label="y", group="g", pred="yhat", out=tmp_path)
    assert "sections_asked" not in json.loads(result.json_path.read_text())["meta"]
