"""Agent guardrails from policy rules (ShieldAgent-style, ICML 2025).

Policies are rules over named predicates in propositional logic with LTLf temporal operators
(:mod:`trustlab.agents.logic`), grouped per action into weighted rule circuits; a guardrail checks
each proposed action of a tool-using agent against them and returns a decision with the
probability that the action is safe and the violated rules named.
"""

from __future__ import annotations

from trustlab._lazy import lazy_names

__getattr__, __all__, __dir__ = lazy_names(
    __name__,
    {
        ".logic": ["evaluate", "parse_rule", "residual", "simplify"],
        ".policy": [
            "Action",
            "Step",
            "Trajectory",
            "Predicate",
            "Rule",
            "GroundedRule",
            "PolicyModel",
            "load_policy",
        ],
        ".circuit": ["RuleCircuit", "CircuitInference", "decide"],
        ".checkers": ["CheckContext", "make_checker", "register_checker", "checker_types"],
        ".guardrail": ["Guardrail", "Decision", "ViolatedRule"],
        ".learning": [
            "learn_weights",
            "fit_rule_weights",
            "WeightFit",
            "cluster_rules",
            "RuleClusters",
            "eigengap_k",
        ],
        ".evaluation": ["evaluate_guardrail", "GuardrailEvaluation"],
        ".server": ["GuardServer", "GuardClient", "make_guard_server", "serve_guardrail"],
        ".provenance": ["argument_mentioned", "intent_mentions", "no_secret_disclosed"],
        ".agentdojo": [
            "GuardCase",
            "agentdojo_cases",
            "suite_policy",
            "suite_guardrail",
            "oracle_values",
            "trajectory_from_messages",
            "GuardrailShield",
        ],
        ".extraction": ["extract_rules", "ExtractedPolicy", "split_sections", "parse_json_answer"],
        ".stwebagentbench": ["stweb_policies", "stweb_summary", "stweb_tasks", "browsergym_step"],
    },
)
