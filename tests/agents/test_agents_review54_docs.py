"""Review pass 54: figures of docs/agents-guardrail.md that no test read: the example's printed
line, the obligation's 0.731 and B3's count of the authors' disagreements (B5's table is read by
tests/test_readme_claims_guardrail.py); and the page's new statement that several matched actions'
circuits sum a shared uncertain predicate out apart, with its figures."""

from __future__ import annotations

import contextlib
import io
import random
import re
from pathlib import Path

import pytest
from one_rule_policy import one_rule_policy
from test_logic import drop_temporal, random_formula, random_trace

from trustlab.agents import Guardrail
from trustlab.agents.logic import evaluate

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents-guardrail.md"


def page_text() -> str:
    return " ".join(PAGE.read_text().split())


def test_the_example_prints_what_its_comment_says():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 1
    quoted = re.search(r"print\(ok\.action_allowed.*# (.+)\n", blocks[0])
    assert quoted, "the example no longer comments its printed line"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], str(PAGE), "exec"), {})
    assert out.getvalue().splitlines()[0] == quoted.group(1).strip()


def test_an_obligation_kept_by_acting_scores_the_quoted_figure():
    quoted = re.search(r"above 1/2 when acting keeps it \(weight 1: ([\d.]+)\)", page_text())
    assert quoted
    guard = Guardrail(one_rule_policy(logic="ok IMPLIES pay"))
    p_safe = guard.check([], "pay", evidence={"ok": True}).p_safe
    assert float(quoted.group(1)) == round(p_safe, 3)


def test_b3_quotes_the_current_step_only_disagreements():
    """B3's sample (tests/agents/test_logic.py); evaluate agrees with flloat on all of it there."""
    rng = random.Random(20250317)  # test_logic.b3_sample's seed and draws
    count = 0
    for _ in range(1000):
        formula = random_formula(rng, 4)
        for trace in [random_trace(rng, n) for n in range(1, 9)]:
            count += evaluate(formula, trace) != evaluate(drop_temporal(formula), trace)
    quoted = re.search(r"current-step-only evaluation disagrees on ([\d,]+) of them", page_text())
    assert quoted
    assert int(quoted.group(1).replace(",", "")) == count


def test_the_page_says_a_shared_uncertain_predicate_counts_once_per_circuit():
    """The page called the inference exact without saying that several matched actions' circuits
    sum a shared uncertain predicate out apart; its example figures are these."""
    quoted = re.search(
        r"with P\(c\) = 0\.5: p_safe ([\d.]+), where one circuit of both rules gives ([\d.]+)\)",
        page_text(),
    )
    assert quoted, "the page does not say how a shared uncertain predicate counts"

    def rule(rule_id: str, action: str) -> dict:
        predicates = [[action, "", "", "action"], ["c", "", "", "condition"]]
        return {"rule_id": rule_id, "predicates": predicates, "logic": f"{action} IMPLIES c"}

    apart = {
        "actions": {"pay": {"soft_rule_ids": ["r1"]}, "mail": {"soft_rule_ids": ["r2"]}},
        "rule_list": [rule("r1", "pay"), rule("r2", "mail")],
        "weights": {"r1": 3.0, "r2": 3.0},
    }
    both = Guardrail(apart).check([], "pay", evidence={"mail": True, "c": 0.5})
    assert both.circuits == ("pay", "mail")
    one = Guardrail(one_rule_policy(condition="c", weights={"r": 6.0}))
    joint = one.check([], "pay", evidence={"c": 0.5}).p_safe  # both rules: one at weight 6
    assert float(quoted.group(1)) == round(both.p_safe, 3)
    assert float(quoted.group(2)) == round(joint, 3)
    hard = Guardrail(apart).check([], "pay", evidence={"mail": True, "c": False})
    assert hard.p_safe == pytest.approx(one.check([], "pay", evidence={"c": False}).p_safe)
