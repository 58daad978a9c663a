"""README.md's guardrail paragraph quotes the AgentDojo figures as measured, beside their control.

With the deterministic checkers the guardrail decides 948 labelled cases of AgentDojo's four
suites; the README gives the accuracy with its interval and the false-positive rate. Most unsafe
cases are guarded actions, so blocking every guarded action already scores well: the claim means
something only if the checkers' interval lies above that control, and the README must say so.
The control is computed here from the cases and the suites' policies, not through the guardrail.
The same measurement checks the B5 figures of docs/agents-guardrail.md (table, suites, counts).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("agentdojo")
pytest.importorskip("pysdd")

from trustlab.agents.agentdojo import agentdojo_cases, suite_guardrail, suite_policy  # noqa: E402
from trustlab.agents.evaluation import evaluate_guardrail  # noqa: E402

README = Path(__file__).resolve().parents[1] / "README.md"
SUITES = ("banking", "slack", "travel", "workspace")


def readme_text() -> str:
    return " ".join(README.read_text().split())


@pytest.fixture(scope="module")
def measured():
    cases = [case for suite in SUITES for case in agentdojo_cases(suite)]
    guards = {suite: suite_guardrail(suite) for suite in SUITES}
    result = evaluate_guardrail(guards, cases, mode="checkers", n_bootstrap=2000, random_state=0)
    guarded = np.array([c.action.name in suite_policy(c.suite).actions for c in cases])
    safe = np.array([c.label == "safe" for c in cases])
    control = {"accuracy": float(np.mean(guarded != safe)), "fpr": float(np.mean(guarded[safe]))}
    return result, control


def test_readme_quotes_the_checkers_figures_as_measured(measured):
    result, _ = measured
    found = re.search(
        r"accuracy 1\.0 on ([\d,]+) cases; with the checkers, ([\d.]+) \[([\d.]+), ([\d.]+)\] "
        r"and a false-positive rate of ([\d.]+)",
        readme_text(),
    )
    assert found, "README.md no longer quotes the AgentDojo figures in the form this test reads"
    n, acc, low, high, fpr = found.groups()
    accuracy = result.metrics["accuracy"]
    assert int(n.replace(",", "")) == result.n_cases
    for quoted, value in ((acc, accuracy["estimate"]), (low, accuracy["low"]),
                          (high, accuracy["high"]),
                          (fpr, result.metrics["false_positive_rate"]["estimate"])):  # fmt: skip
        assert float(quoted) == pytest.approx(value, abs=0.0005), (quoted, value)


def test_the_checkers_beat_blocking_every_guarded_action_and_the_readme_says_so(measured):
    result, control = measured
    # the control that would tie if the checkers added nothing over the policy's action list
    assert result.metrics["accuracy"]["low"] > control["accuracy"]
    assert result.metrics["false_positive_rate"]["high"] < control["fpr"]
    found = re.search(r"blocking every guarded action: ([\d.]+), false-positive rate ([\d.]+)",
                      readme_text())  # fmt: skip
    assert found, "README.md must quote the block-everything control beside the checkers"
    assert float(found.group(1)) == pytest.approx(control["accuracy"], abs=0.0005)
    assert float(found.group(2)) == pytest.approx(control["fpr"], abs=0.0005)


PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents-guardrail.md"


def _page_text() -> str:
    return " ".join(PAGE.read_text().split())


def _close(quoted: str, value: float) -> None:
    assert float(quoted) == pytest.approx(value, abs=0.0005), (quoted, value)


def test_the_docs_page_quotes_b5_with_the_checkers_as_measured(measured):
    """docs/agents-guardrail.md's B5 table, per-suite line and counts (review 54: no test read them)."""
    result, control = measured
    text = _page_text()
    number = r"([\d.]+)"
    interval = rf"{number} \[{number}, {number}\]"
    row = re.search(
        rf"\| deterministic checkers \| {interval} \| {interval} \| {interval} \|", text
    )
    assert row, "the page's B5 row of the checkers is no longer in the form this test reads"
    quoted = iter(row.groups())
    for name in ("accuracy", "false_positive_rate", "rule_recall"):
        metric = result.metrics[name]
        for key in ("estimate", "low", "high"):
            _close(next(quoted), metric[key])
    block = re.search(rf"\| control: block every guarded action \| {number} \| {number} \|", text)
    allow = re.search(rf"\| control: allow everything \| {number} \| {number} \|", text)
    assert block and allow
    _close(block.group(1), control["accuracy"])
    _close(block.group(2), control["fpr"])
    _close(allow.group(1), result.n_safe / result.n_cases)
    _close(allow.group(2), 0.0)
    suites = re.search(
        rf"Per suite with the checkers: banking {interval} .*?, slack {number}, travel {number}, "
        rf"workspace {number}\.",
        text,
    )
    assert suites, "the page's per-suite line is no longer in the form this test reads"
    banking = result.by_group["banking"]["accuracy"]
    expected = [banking["estimate"], banking["low"], banking["high"]]
    expected += [
        result.by_group[s]["accuracy"]["estimate"] for s in ("slack", "travel", "workspace")
    ]
    for quoted_value, value in zip(suites.groups(), expected, strict=True):
        _close(quoted_value, value)
    counts = re.search(
        r"reads the policies do not guard \((\d+) of (\d+)\); of the (\d+) safe \*guarded\* "
        r"actions the checkers block (\d+)",
        text,
    )
    assert counts
    safe = [r for r in result.records if r["label"] == "safe"]
    guarded = [r for r in safe if r["action"] in suite_policy(r["group"]).actions]
    blocked = sum(not r["allowed"] for r in guarded)
    found = [int(g) for g in counts.groups()]
    assert found == [len(safe) - len(guarded), len(safe), len(guarded), blocked]
