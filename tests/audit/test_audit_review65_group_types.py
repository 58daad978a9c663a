"""Review 65: report.json's fairness section listed integer groups as strings ('1', '2') while
the DCP result beside it (multiclass_dcp(...).to_dict()) and the overview list them as ints."""

import json

import pandas as pd

from trustlab._results import to_jsonable
from trustlab.audit import run_audit


def test_fairness_groups_match_the_dcp_result_and_the_overview(tmp_path):
    table = pd.DataFrame({"y": [0, 1] * 12, "p": [0, 1, 1, 0] * 6, "g": [1, 1, 2, 2, 3, 3] * 4})
    result = run_audit(table, label="y", group="g", pred="p", out=tmp_path / "o",
                       sections=["overview", "fairness"])  # fmt: skip
    report = json.loads(result.json_path.read_text(encoding="utf-8"))
    sections = {s["id"]: s["data"] for s in report["sections"]}
    fairness = sections["fairness"]
    dcp = to_jsonable(result.report.sections[1].data["models"]["p"]["result"])
    assert fairness["groups"] == dcp["known"]["groups"] == [1, 2, 3]
    assert fairness["models"]["p"]["result"]["known"]["groups"] == [1, 2, 3]
    assert [g["group"] for g in sections["overview"]["groups"]] == [1, 2, 3]
    assert list(fairness["group_sizes"]) == ["1", "2", "3"]  # JSON object keys are strings
