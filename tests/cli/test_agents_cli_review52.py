"""``trustlab agents``, review pass 52: files that are not UTF-8, integers of over 4300 digits,
a JSONL file's bad line named by its number, the cluster help's limit."""

from __future__ import annotations

import json

import pytest

from agents.one_rule_policy import one_rule_policy
from cli_helpers import one_line

POLICY = one_rule_policy()
CASE = {"action": "pay", "label": "safe", "oracle": {"ok": True}}
HUGE = "1" * 5000  # Python refuses int() of it: a ValueError, not a JSONDecodeError


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(POLICY))
    return path


def _error(run, *args):
    code, _, err = run("agents", *args)
    assert code == 2, err  # "unexpected failure" (exit 1) before
    return one_line(err)


def test_files_saved_as_utf16_are_refused_in_one_line(run, policy_file, tmp_path):
    utf16 = tmp_path / "utf16.json"
    utf16.write_text(json.dumps(POLICY), encoding="utf-16")
    assert "--policy: " in _error(run, "check", "--policy", utf16, "--action", "pay")
    assert "not valid UTF-8 JSON" in _error(run, "check", "--policy", utf16, "--action", "pay")
    assert "--action: " in _error(run, "check", "--policy", policy_file, "--action", f"@{utf16}")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([CASE]), encoding="utf-16")
    message = _error(run, "evaluate", "--policy", policy_file, "--cases", cases)
    assert message.startswith("trustlab: error: --cases: ")
    assert "not UTF-8 text" in message


def test_an_integer_of_over_4300_digits_is_refused_in_one_line(run, policy_file, tmp_path):
    action = '{"name": "pay", "arguments": {"amount": ' + HUGE + "}}"
    assert "--action: " in _error(run, "check", "--policy", policy_file, "--action", action)
    cases = tmp_path / "cases.json"
    cases.write_text('[{"action": "pay", "label": "safe", "oracle": {"ok": ' + HUGE + "}}]")
    message = _error(run, "evaluate", "--policy", policy_file, "--cases", cases)
    assert "--cases: " in message and "4300 digits" in message
    policy = tmp_path / "huge.json"
    policy.write_text(json.dumps(POLICY)[:-1] + ', "weights": {"r": ' + HUGE + "}}")
    assert "--policy: " in _error(run, "check", "--policy", policy, "--action", "pay")


def test_a_bad_jsonl_line_is_named_by_its_number(run, policy_file, tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE) + "\n\n" + json.dumps(CASE) + '\n{"action": pay}\n')
    message = _error(run, "evaluate", "--policy", policy_file, "--cases", cases, "--mode", "oracle")
    assert "line 4 of" in message  # each line's own "line 1 column 12" was all it said
    cases.write_text(json.dumps(CASE) + "\n[1]\n")
    message = _error(run, "evaluate", "--policy", policy_file, "--cases", cases, "--mode", "oracle")
    # "expected a list of case objects, got 'list'" before
    assert "expected a case object on line 2 of" in message and "[1]" in message
    listed = tmp_path / "cases.json"
    listed.write_text(json.dumps([CASE, 5]))
    message = _error(run, "evaluate", "--policy", policy_file, "--cases", listed)
    assert "expected a case object at index 1 of the list, got 5" in message


def test_cluster_help_no_longer_says_the_eigengap_never_leaves_a_rule_alone(run):
    code, out, _ = run("agents", "cluster", "--help")
    assert code == 0
    text = " ".join(out.replace("│", " ").split())
    assert "never leaves one alone" not in text
    assert "only sometimes stands alone" in text
