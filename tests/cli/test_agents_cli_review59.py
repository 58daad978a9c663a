"""``trustlab agents learn-weights --mode oracle`` learns from the cases' oracle values alone, as
``evaluate --mode oracle`` checks with them (review 59).

It passed each case's ``evidence`` before its ``oracle`` and used the checkers when a case had no
oracle: a case with evidence ok=true and oracle ok=false left rule r unused (no weight learned,
where the oracle gives +0.401), and a case without oracle values learned from the checkers
without a word (evaluate refuses it).
"""

from __future__ import annotations

import json

from agents.one_rule_policy import one_rule_policy
from cli_helpers import one_line

POLICY = one_rule_policy(
    checkers={"ok": {"type": "action_count", "name": "pay", "op": "<=", "value": 0}}
)
EMPTY = {"task_intent": "", "steps": []}


def _learn(run, tmp_path, cases, *extra):
    (tmp_path / "policy.json").write_text(json.dumps(POLICY))
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    out = tmp_path / "weighted.json"
    code, _, err = run(
        "agents", "learn-weights", "--policy", str(tmp_path / "policy.json"),
        "--cases", str(tmp_path / "cases.json"), "--out", str(out), *extra,
    )  # fmt: skip
    return code, err, out


def test_oracle_values_win_over_a_cases_evidence(run, tmp_path):
    case = {"trajectory": EMPTY, "action": "pay", "label": "unsafe",
            "evidence": {"ok": True}, "oracle": {"ok": False}}  # fmt: skip
    code, err, out = _learn(run, tmp_path, [case], "--mode", "oracle")
    assert code == 0, err
    # one unsafe step with feature -1: w minimises w^2/2 + log(1 + e^-w), w = 0.4011 (C = 1)
    assert abs(json.loads(out.read_text())["weights"]["r"] - 0.40106) < 1e-4


def test_a_case_without_oracle_values_is_refused(run, tmp_path):
    case = {"trajectory": EMPTY, "action": "pay", "label": "unsafe"}
    code, err, out = _learn(run, tmp_path, [case], "--mode", "oracle")
    assert code == 2 and not out.exists()
    assert one_line(err) == (
        "trustlab: error: cases[0].oracle: expected oracle predicate values with --mode oracle, "
        "got None"
    )
    code, err, _ = _learn(run, tmp_path, [case], "--mode", "checkers")  # the checkers' turn
    assert code == 0, err
