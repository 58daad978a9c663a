"""Review 61: the agents commands refuse JSON that lists a key twice in one object.

json.loads keeps the last value: a policy file with "weights": {"r": 1.0, "r": -5.0} was read as
weight -5 (pay with ok=false allowed, p_safe 0.99, where weight 1 blocks it at 0.27), and
--evidence '{"ok": false, "ok": true}' checked ok=true; a cases file lost the first label.
"""

from __future__ import annotations

import json

from agents.one_rule_policy import one_rule_policy
from cli_helpers import one_line

POLICY = json.dumps(one_rule_policy(weights={"r": 1.0}))
TWICE = POLICY.replace('{"r": 1.0}', '{"r": 1.0, "r": -5.0}')


def test_a_policy_file_with_a_weight_given_twice_is_refused(run, tmp_path):
    (tmp_path / "p.json").write_text(TWICE)
    code, _, err = run("agents", "check", "--policy", str(tmp_path / "p.json"), "--action", "pay")
    assert code == 2
    assert "expected each key once in an object, got 'r' twice" in one_line(err)


def test_evidence_with_a_predicate_given_twice_is_refused(run, tmp_path):
    (tmp_path / "p.json").write_text(POLICY)
    code, _, err = run(
        "agents", "check", "--policy", str(tmp_path / "p.json"), "--action", "pay",
        "--evidence", '{"ok": false, "ok": true}',
    )  # fmt: skip
    assert code == 2
    assert one_line(err).endswith("--evidence: expected each key once in an object, got 'ok' twice")


def test_a_cases_file_with_a_label_given_twice_is_refused(run, tmp_path):
    (tmp_path / "p.json").write_text(POLICY)
    case = '{"trajectory": [], "action": "pay", "evidence": {"ok": false}, '
    (tmp_path / "c.jsonl").write_text(case + '"label": "safe", "label": "unsafe"}\n')
    code, _, err = run(
        "agents", "learn-weights", "--policy", str(tmp_path / "p.json"),
        "--cases", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "w.json"),
    )  # fmt: skip
    assert code == 2
    assert "line 1 of" in err and "got 'label' twice" in err
    assert not (tmp_path / "w.json").exists()
