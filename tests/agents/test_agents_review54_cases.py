"""Evaluation/learning cases and rule declarations that were read wrongly without a word."""

from __future__ import annotations

import json

import pytest
from one_rule_policy import one_rule_policy

from cli_helpers import one_line, run_main, with_options
from trustlab.agents import Guardrail, evaluate_guardrail, fit_rule_weights, load_policy
from trustlab.errors import InputError


def _case(**extra):
    return {"action": "pay", "oracle": {"ok": True}, "label": "safe", **extra}


@pytest.mark.parametrize("run", ["evaluate", "fit"])
def test_a_case_without_a_trajectory_or_with_a_misspelt_key_is_refused(run):
    guard = Guardrail(one_rule_policy())

    def call(cases):
        if run == "evaluate":
            return evaluate_guardrail(guard, cases, mode="oracle", random_state=0)
        return fit_rule_weights(guard, [{**c, "evidence": c["oracle"]} for c in cases])

    good = _case(trajectory=[])
    # both were checked on the empty history: the typo went unnoticed
    with pytest.raises(InputError, match=r"cases\[1\]\.trajectory: expected the trajectory"):
        call([good, _case()])
    with pytest.raises(InputError, match=r"cases\[1\]: expected keys among .*'trajectroy'"):
        call([good, _case(trajectroy=[])])
    call([good, _case(trajectory={"task_intent": "", "steps": []})])  # the empty history, said


def test_the_cli_names_the_case_without_a_trajectory(tmp_path, capsys):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(one_rule_policy()))
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([_case(trajectory=[]), _case(trajectroy=[])]))
    args = ["agents", "evaluate", "--policy", policy, "--cases", cases]
    code, _, err = run_main(with_options(args, ["--mode", "oracle"]), capsys)
    assert code == 2
    assert "cases[1]: expected keys among" in one_line(err)


def test_cluster_zero_and_text_zero_are_refused_not_merged():
    guard = Guardrail(one_rule_policy())
    cases = [_case(trajectory=[], cluster=0), _case(trajectory=[], cluster="0")]
    with pytest.raises(InputError, match=r"cases\[1\]\.cluster: expected trajectory labels of one"):
        evaluate_guardrail(guard, cases, mode="oracle", random_state=0)
    cases = [_case(trajectory=[], user_task=1), _case(trajectory=[], user_task=1)]
    result = evaluate_guardrail(guard, cases, mode="oracle", random_state=0)
    assert [r["trajectory"] for r in result.records] == ["1", "1"]


def test_a_predicate_declared_twice_in_a_rule_differently_is_refused():
    policy = one_rule_policy()
    policy["rule_list"][0]["predicates"].append(["ok", "the user said yes", "", "condition"])
    with pytest.raises(InputError, match=r"rule 'r': predicate 'ok' is declared twice"):
        load_policy(policy)
    policy = one_rule_policy()
    policy["rule_list"][0]["predicates"].append(["ok", "", "", "condition"])
    assert load_policy(policy).rule("r").predicate("ok").description == ""  # the same twice


def test_a_case_without_a_cluster_is_not_merged_with_one_labelled_like_its_default():
    guard = Guardrail(one_rule_policy())
    cases = [_case(trajectory=[], cluster="case1"), _case(trajectory=[])]
    accuracy = evaluate_guardrail(guard, cases, mode="oracle", random_state=0).metrics["accuracy"]
    assert accuracy["low"] is not None  # two trajectories: one (no interval) before


def test_free_keys_a_user_attaches_to_a_case_are_accepted_and_change_nothing():
    guard = Guardrail(one_rule_policy())
    plain = [_case(trajectory=[]), _case(trajectory=[], label="unsafe")]
    tagged = [
        {**plain[0], "id": "c-1", "notes": "from the pilot"},
        {**plain[1], "id": 2, "metadata": {"annotator": "a"}},
    ]
    ours = evaluate_guardrail(guard, tagged, mode="oracle", random_state=0).to_dict()
    theirs = evaluate_guardrail(guard, plain, mode="oracle", random_state=0).to_dict()
    ours.pop("seconds_per_check"), theirs.pop("seconds_per_check")  # a timing
    assert ours == theirs
