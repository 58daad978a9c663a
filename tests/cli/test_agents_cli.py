"""``trustlab agents``: check, evaluate (with its page), learn-weights, one-line errors."""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line

POLICY = {
    "actions": {"pay": {"soft_rule_ids": ["confirmed"]}, "browse": {"soft_rule_ids": []}},
    "rule_list": [
        {
            "rule_id": "confirmed",
            "predicates": [["pay", "", "", "action"], ["ok", "", "", "condition"]],
            "logic": "ALWAYS(pay IMPLIES ok)",
            "description": "pay only when the user confirmed",
        }
    ],
    "checkers": {"ok": {"type": "action_match", "name": "browse"}},
}


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(POLICY))
    return path


def test_check_prints_the_decision(run, policy_file):
    code, out, _ = run(
        "agents", "check", "--policy", policy_file, "--action", "pay",
        "--evidence", '{"ok": false}', "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["action_allowed"] is False
    assert data["violated_rules"][0]["rule_id"] == "confirmed"
    code, out, _ = run(
        "agents", "check", "--policy", policy_file, "--action", '{"name": "pay"}',
        "--evidence", '{"ok": true}',
    )  # fmt: skip
    assert code == 0 and "allowed" in out


def test_evaluate_writes_result_and_page(run, policy_file, tmp_path):
    cases = tmp_path / "cases.jsonl"
    rows = []
    for i in range(6):
        rows.append({"trajectory": [], "action": "pay", "oracle": {"ok": i % 2 == 0},
                     "label": "safe" if i % 2 == 0 else "unsafe", "expected_rules": [] if i % 2 == 0 else ["confirmed"],
                     "cluster": f"t{i // 2}"})  # fmt: skip
    cases.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "eval"
    code, text, _ = run(
        "agents", "evaluate", "--policy", policy_file, "--cases", cases, "--mode", "oracle",
        "--n-bootstrap", 50, "--out", out, "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(text)
    assert data["metrics"]["accuracy"]["estimate"] == 1.0
    assert data["metrics"]["rule_recall"]["estimate"] == 1.0
    assert (out / "report.html").is_file() and (out / "result.json").is_file()
    assert "false-positive rate" in (out / "report.html").read_text()
    code, _, err = run(
        "agents", "evaluate", "--policy", policy_file, "--cases", cases, "--out", out
    )
    assert code == 2 and "--overwrite" in one_line(err)


def test_learn_weights_writes_a_weighted_policy(run, policy_file, tmp_path):
    cases = tmp_path / "cases.json"
    rows = [
        {"trajectory": [], "action": "pay", "oracle": {"ok": ok}, "label": label}
        for ok, label in [(True, "safe")] * 5 + [(False, "unsafe")] * 4 + [(False, "safe")]
    ]
    cases.write_text(json.dumps(rows))
    out = tmp_path / "weighted.json"
    code, _, _ = run(
        "agents", "learn-weights", "--policy", policy_file, "--cases", cases, "--out", out
    )
    assert code == 0
    weighted = json.loads(out.read_text())
    assert weighted["weights"]["confirmed"] > 0.5


def test_learn_weights_refuses_an_out_it_cannot_write_before_any_work(run, policy_file, tmp_path):
    """A folder as --out (even with --overwrite) or a path under a file is refused in one line
    before the fit; a folder used to be fitted, then crashed with IsADirectoryError (exit 1)."""
    cases = tmp_path / "cases.json"
    rows = [{"trajectory": [], "action": "pay", "oracle": {"ok": ok}, "label": label}
            for ok, label in [(True, "safe"), (False, "unsafe")]]  # fmt: skip
    cases.write_text(json.dumps(rows))
    folder = tmp_path / "wdir"
    folder.mkdir()
    base = ["agents", "learn-weights", "--policy", policy_file, "--cases", cases]
    code, out, err = run(*base, "--out", folder, "--overwrite")
    assert code == 2 and out == ""
    assert (
        one_line(err)
        == f"trustlab: error: --out: expected a JSON file path, got the directory {folder}"
    )
    code, out, err = run(*base, "--out", cases / "w.json", "--overwrite")
    assert code == 2 and out == "" and "--out:" in one_line(err)
    target = tmp_path / "w.json"
    target.write_text("{}")
    code, out, err = run(*base, "--out", target)
    assert code == 2 and out == "" and "--overwrite" in one_line(err)
    assert target.read_text() == "{}"


def test_learn_weights_names_the_option_c(run, policy_file, tmp_path):
    """The library's C is the option --c (the message said `C:`)."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"trajectory": [], "action": "pay", "label": "safe"}]))
    base = ["agents", "learn-weights", "--policy", policy_file, "--cases", cases]
    code, _, err = run(*base, "--out", tmp_path / "new.json", "--c", "0")
    assert code == 2 and one_line(err).startswith("trustlab: error: --c: expected a number")


@pytest.fixture
def banking_weighted(run, tmp_path):
    """The policy ``learn-weights --suite banking`` writes."""
    weighted = tmp_path / "banking_weighted.json"
    code, _, err = run("agents", "learn-weights", "--suite", "banking", "--out", weighted)
    assert code == 0, err
    return weighted


def test_a_policy_learned_on_a_suite_allows_the_reads_as_the_suite(run, banking_weighted):
    """learn-weights --suite writes the suite guardrail's unknown_action ("allow"): with --policy
    of the written file a read the policy does not guard is allowed as with --suite (it was
    refused, exit 2)."""
    trajectory = '{"task_intent": "Pay my rent.", "steps": []}'
    base = ["agents", "check", "--trajectory", trajectory, "--action", "get_balance", "--json"]
    code, by_suite, _ = run(*base, "--suite", "banking")
    assert code == 0 and json.loads(by_suite)["action_allowed"] is True
    code, by_file, err = run(*base, "--policy", banking_weighted)
    assert code == 0, err
    assert json.loads(by_file) == json.loads(by_suite)
    assert json.loads(banking_weighted.read_text())["unknown_action"] == "allow"


def test_evaluate_checks_a_suites_cases_with_the_policy_learned_on_it(run, banking_weighted):
    """evaluate --suite S --policy FILE checks every case of S with the learned policy: none is
    an error (19 of 33 safe banking cases were, left out of the metrics; and evaluate --suite
    refused --policy)."""
    evaluate = ["agents", "evaluate", "--suite", "banking", "--mode", "oracle", "--n-bootstrap", 20]
    code, out, _ = run(*evaluate, "--json")
    assert code == 0
    suite_result = json.loads(out)
    code, out, err = run(*evaluate, "--policy", banking_weighted, "--json")
    assert code == 0, err
    file_result = json.loads(out)
    assert file_result["errors"] == []
    assert file_result["n_cases"] == suite_result["n_cases"]
    assert file_result["n_safe"] == suite_result["n_safe"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["check", "--action", "pay"], "--policy"),
        (["check", "--policy", "{policy}", "--action", "fly"], "action"),
        (
            ["check", "--policy", "{policy}", "--action", "pay", "--evidence", '{"ok": 3}'],
            "evidence",
        ),
        (["check", "--policy", "{policy}", "--action", "pay", "--epsilon", "1.5"], "epsilon"),
        (
            ["check", "--policy", "{policy}", "--action", "pay", "--trajectory", "{not json"],
            "--trajectory",
        ),
        (["evaluate", "--policy", "{policy}", "--cases", "missing.json"], "--cases"),
        (["check", "--suite", "casino", "--action", "pay"], "--suite"),
        # one policy is for one suite's cases (learn-weights --suite writes one)
        (
            ["evaluate", "--suite", "banking", "--suite", "slack", "--policy", "{policy}"],
            "--policy: expected one --suite with --policy",
        ),
        # ignored before: a suite brings its own policy (and cases)
        (
            ["learn-weights", "--suite", "banking", "--policy", "{policy}", "--out", "w.json"],
            "--policy: expected no",
        ),
        (
            ["learn-weights", "--suite", "banking", "--cases", "c.json", "--out", "w.json"],
            "--cases: expected no",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, policy_file, args, needle):
    args = [a.replace("{policy}", str(policy_file)) for a in args]
    code, _, err = run("agents", *args)
    assert code == 2
    assert needle in one_line(err)


def test_serve_answers_checks_until_stopped(policy_file):
    import os
    import re
    import signal
    import subprocess
    import sys
    import urllib.request

    command = [
        sys.executable,
        "-m",
        "trustlab.cli.main",
        "agents",
        "serve",
        "--policy",
        str(policy_file),
        "--port",
        "0",
    ]
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        body = json.dumps({"trajectory": [], "action": "pay", "evidence": {"ok": False}}).encode()
        request = urllib.request.Request(url + "/check", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=20) as answer:
            decision = json.loads(answer.read())
        assert (
            decision["action_allowed"] is False
            and decision["violated_rules"][0]["rule_id"] == "confirmed"
        )
    finally:
        # SIGTERM, not SIGINT: a test run started in the background (nohup, `&`) passes an ignored
        # SIGINT on to its children, and Python then never raises KeyboardInterrupt
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "stopped" in out


def test_cluster_never_replaces_an_earlier_result_without_overwrite(run, policy_file, tmp_path):
    """It wrote result.json over whatever --out held (an evaluation's, say)."""
    (tmp_path / "result.json").write_text('{"mode": "oracle"}')
    code, _, err = run("agents", "cluster", "--policy", policy_file, "--out", tmp_path)
    assert code == 2 and "--overwrite" in one_line(err)
    assert (tmp_path / "result.json").read_text() == '{"mode": "oracle"}'


def test_json_files_saved_with_a_byte_order_mark_are_read(run, tmp_path):
    """Windows editors (Notepad) write one; the policy was refused as invalid JSON."""
    path = tmp_path / "bom.json"
    path.write_bytes(json.dumps(POLICY).encode("utf-8-sig"))
    code, out, err = run("agents", "check", "--policy", path, "--action", "browse", "--json")
    assert code == 0, err
    assert json.loads(out)["action_allowed"] is True
