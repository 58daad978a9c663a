"""The guardrail: check each proposed action of an agent against a policy's rule circuits.

For a candidate action, the guardrail finds the policy actions it instantiates (by name, or by the
checker declared for an action predicate), computes every predicate the relevant rules mention on
the history (the steps so far) and on the candidate step (with the policy's checkers, values
recorded on the steps, or ``evidence`` given by the caller), and runs exact inference in each
relevant :class:`~trustlab.agents.circuit.RuleCircuit`. The action is allowed iff
``p_safe >= (1 + epsilon) / 2``; the violated rules are reported ranked by weight, each with an
explanation (the predicate values that falsify it) and feedback for the agent.

When a candidate instantiates several policy actions, their circuits' log-odds add up (exact when
the circuits share no uncertain predicate, and always exact with hard evidence); a rule in several
of them counts once.

>>> from trustlab.agents import Guardrail
>>> guard = Guardrail({
...     "actions": {"send_money": {"soft_rule_ids": ["confirm"]}},
...     "rule_list": [{
...         "rule_id": "confirm",
...         "predicates": [["send_money", "", "", "action"], ["user_confirmed", "", "", "condition"]],
...         "logic": "ALWAYS(send_money IMPLIES user_confirmed)",
...         "description": "Never send money without the user's confirmation.",
...     }],
...     "weights": {"confirm": 3.0},
... })
>>> guard.check([], "send_money", evidence={"user_confirmed": False}).action_allowed
False
>>> guard.check([], "send_money", evidence={"user_confirmed": True}).action_allowed
True
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit

from trustlab._checks import check_choice, check_in_range
from trustlab._results import Result
from trustlab.agents import provenance as _provenance  # noqa: F401  (registers its checkers)
from trustlab.agents._names import nfc, nfc_keys
from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.circuit import METHODS, RuleCircuit, decide
from trustlab.agents.logic import FALSE, And, Eventually, Formula, WeakNext
from trustlab.agents.policy import (
    MAX_RULE_WEIGHT,
    Action,
    PolicyModel,
    Rule,
    Step,
    Trajectory,
    as_action,
    as_trajectory,
    load_policy,
)
from trustlab.errors import InputError

__all__ = ["Guardrail", "Decision", "ViolatedRule", "anchored", "not_instantiated"]


def anchored(formula: Formula) -> Formula:
    """The rule as the guardrail judges it on the trace history + proposed step.

    A rule with a temporal operator is a statement about the whole trace (LTLf at its first
    step). A rule without one (``send_money IMPLIES user_confirmed``) is judged at the proposed
    step: it becomes ``EVENTUALLY(WEAK_NEXT FALSE AND rule)``, "at the last step, the rule holds".
    Read at the trace's first step it would otherwise stop applying once there is a history.
    """
    if formula.temporal:
        return formula
    return Eventually(And((WeakNext(FALSE), formula)))


_UNKNOWN = ("error", "allow", "block")


@dataclass(frozen=True)
class ViolatedRule(Result):
    """A rule the candidate action breaks: its id, weight, why and what to do instead."""

    rule_id: str
    weight: float
    description: str
    explanation: str
    feedback: str

    def summary(self) -> str:
        return f"{self.rule_id} (weight {self.weight:g}): {self.explanation}"


@dataclass(frozen=True)
class Decision(Result):
    """The guardrail's verdict on one candidate action.

    ``to_dict()`` has ShieldAgent's decision format (``action_allowed``, ``violated_rules`` with
    ``rule_id``/``explanation``/``feedback``, ``explanation``) plus ``p_safe``, the threshold, the
    policy actions whose circuits were used and the candidate step's predicate values (None for a
    predicate left uncertain and marginalised).
    """

    action: str
    action_allowed: bool
    p_safe: float
    threshold: float
    violated_rules: tuple[ViolatedRule, ...]
    explanation: str
    circuits: tuple[str, ...] = ()
    predicates: Mapping[str, Any] = field(default_factory=dict)
    methods: tuple[str, ...] = ()

    @property
    def violated_rule_ids(self) -> list[str]:
        return [v.rule_id for v in self.violated_rules]

    def summary(self) -> str:
        return self.explanation


class Guardrail:
    """Check agent actions against a policy of weighted rules (ShieldAgent's ASPM).

    Parameters
    ----------
    policy : PolicyModel, mapping or path
        The policy (see :func:`trustlab.agents.load_policy`).
    epsilon : float, default 0.0
        Margin of the decision, in (-1, 1): allow iff ``p_safe - (1 - p_safe) >= epsilon``. An
        action that keeps every rule scores exactly 1/2 when the rules are prohibitions
        (``a IMPLIES c``; an obligation kept by acting, ``c IMPLIES a``, scores above) and any
        doubt about its predicates (a checker's probability below 1) scores below; with uncertain checkers, a negative epsilon
        tolerates that doubt (see :func:`~trustlab.agents.circuit.decide`).
    default_weight : float, default 1.0
        Weight of a rule the policy gives none.
    checkers : mapping, optional
        Predicate name -> a checker (a callable taking a
        :class:`~trustlab.agents.checkers.CheckContext`, returning a bool or a probability) or a
        checker specification; overrides the policy's ``checkers``.
    unknown_action : {"error", "allow", "block"}, optional
        What to do with an action no policy action covers. By default the policy's
        ``unknown_action`` key, and ``"error"`` for a policy without it.
    method : {"auto", "closed_form", "enumerate", "compiled"}
        Inference method of the circuits (see :class:`~trustlab.agents.circuit.RuleCircuit`).
    """

    def __init__(
        self,
        policy: PolicyModel | Mapping[str, Any] | str,
        *,
        epsilon: float = 0.0,
        default_weight: float = 1.0,
        checkers: Mapping[str, Any] | None = None,
        unknown_action: str | None = None,
        method: str = "auto",
    ):
        self.policy = load_policy(policy)
        # numpy numbers too: np.float32(0.2) was refused as "expected a number in (-1, 1)"
        epsilon = check_in_range(epsilon, "epsilon", -1.0, 1.0, low_open=True, high_open=True)
        default_weight = check_in_range(
            default_weight, "default_weight", -MAX_RULE_WEIGHT, MAX_RULE_WEIGHT
        )
        method = check_choice(method, "method", METHODS)  # not only at the first check
        if unknown_action is None:
            unknown_action = self.policy.unknown_action or "error"
        if unknown_action not in _UNKNOWN:
            raise InputError.bad("unknown_action", f"one of {list(_UNKNOWN)}", unknown_action)
        self.epsilon = float(epsilon)
        self.default_weight = float(default_weight)
        self.unknown_action = unknown_action
        self.method = method
        specs: dict[str, Any] = dict(self.policy.checkers)
        if checkers is not None:
            if not isinstance(checkers, Mapping):
                raise InputError.bad("checkers", "a mapping predicate -> checker", checkers)
            checkers = nfc_keys(checkers, "checkers")  # names in NFC, as the policy's
            unknown = sorted(set(checkers) - set(self.policy.predicates))
            if unknown:
                raise InputError.bad(
                    "checkers",
                    f"checkers for declared predicates {sorted(self.policy.predicates)}",
                    unknown,
                )
            specs.update(checkers)
        self._checkers: dict[str, Callable[[CheckContext], Any]] = {}
        for name, spec in specs.items():
            if callable(spec):
                self._checkers[name] = spec
            else:
                if (
                    isinstance(spec, Mapping)
                    and spec.get("type") == "llm"
                    and "question" not in spec
                ):
                    # an LLM checker asks about the predicate's own description by default
                    described = self.policy.predicates[name].description or name.replace("_", " ")
                    spec = {**spec, "question": f"Is the following true of this step: {described}?"}
                try:
                    self._checkers[name] = make_checker(spec)
                except InputError as err:
                    raise InputError(f"checkers[{name!r}]: {err}", argument="checkers") from None
        self._rules = {r.rule_id: r for r in self.policy.rule_list}
        self._index = {r.rule_id: i for i, r in enumerate(self.policy.rule_list)}
        self._circuits: dict[str, tuple[RuleCircuit, list[Rule]]] = {}
        self._memo: OrderedDict[tuple[str, str], bool] = OrderedDict()

    # ------------------------------------------------------------------ weights and circuits

    def weight(self, rule_id: str) -> float:
        """The weight of rule ``rule_id`` (the policy's, else the default); an id the policy does
        not have is refused (it had the default weight, as if it were a rule)."""
        rule_id = nfc(rule_id)  # ids: NFC
        if not isinstance(rule_id, str) or rule_id not in self._rules:
            raise InputError.bad(
                "rule_id", f"a rule id of the policy {sorted(self._rules)}", rule_id
            )
        return float(self.policy.weights.get(rule_id, self.default_weight))

    @property
    def weights(self) -> dict[str, float]:
        return {rid: self.weight(rid) for rid in self._rules}

    def with_weights(self, weights: Mapping[str, float]) -> Guardrail:
        """A copy of this guardrail whose policy carries ``weights`` (e.g. learned ones)."""
        data = self.policy.model_dump(mode="python")
        if not isinstance(weights, Mapping):
            raise InputError.bad("weights", "a mapping rule id -> weight", weights)
        weights = nfc_keys(weights, "weights")  # ids in NFC: merged with the policy's below
        given = {
            k: check_in_range(v, f"weights[{k!r}]", -math.inf, math.inf) for k, v in weights.items()
        }
        data["weights"] = {**self.policy.weights, **given}
        clone = Guardrail.__new__(Guardrail)
        clone.__dict__.update(self.__dict__)
        clone.policy = load_policy(data)
        clone._circuits = {}
        return clone

    def policy_json(self) -> dict[str, Any]:
        """The policy as JSON data that loads back into this guardrail's decisions: every rule's
        weight (the default weight written out) and ``unknown_action``. ``Guardrail(data,
        epsilon=...)`` then decides as this one does; checkers given to the constructor (not in
        the policy) are not part of it. What ``trustlab agents learn-weights`` writes.
        """
        data = self.policy.as_json()
        data["weights"] = self.weights
        data["unknown_action"] = self.unknown_action
        return data

    def _circuit(self, action: str, skip: set[str]) -> tuple[RuleCircuit, list[Rule], set[str]]:
        """The circuit of ``action`` (without the rules in ``skip``), its rules and the predicates
        whose history values it needs (those of temporal rules, and the action's)."""
        key = action + "\x00" + ",".join(sorted(skip))
        hit = self._circuits.get(key)
        if hit is None:
            rules = [r for r in self.policy.rules_for(action) if r.rule_id not in skip]
            circuit = RuleCircuit(
                action,
                [(anchored(r.formula), self.weight(r.rule_id)) for r in rules],
                rule_ids=[r.rule_id for r in rules],
            )
            temporal = {action}.union(*(r.formula.predicates for r in rules if r.formula.temporal))
            hit = self._circuits[key] = (circuit, rules, temporal)
        return hit

    # ------------------------------------------------------------------ predicates

    def _is_action(self, name: str) -> bool:
        return name in self.policy.actions or self.policy.predicates[name].type == "action"

    def matched_actions(
        self, trajectory: Any, action: Any, *, evidence: Mapping[str, Any] | None = None
    ) -> list[str]:
        """The policy actions the candidate ``action`` instantiates (in the policy's order): by
        ``evidence`` on the action's predicate (true from 0.5), else its checker, else the name."""
        traj = as_trajectory(trajectory)
        act = as_action(action)
        evidence = _check_evidence(evidence, self.policy)
        ctx = CheckContext(history=tuple(traj.steps), action=act, task_intent=traj.task_intent)
        out = []
        for name in self.policy.actions:
            checker = self._checkers.get(name)
            if name in evidence:  # evidence overrides checkers, here as for the conditions
                if float(evidence[name]) >= 0.5:
                    out.append(name)
            elif checker is not None:
                if _truth(checker(ctx), name) >= 0.5:
                    out.append(name)
            elif act.name == name:
                out.append(name)
        return out

    def _history_values(
        self, traj: Trajectory, names: set[str], needed: set[str]
    ) -> list[dict[str, bool]]:
        """Each history step's values of ``names``; only ``needed`` ones are computed (the others
        belong to rules judged at the proposed step alone, where history values do not matter)."""
        steps = traj.steps
        out: list[dict[str, bool]] = []
        digest = hashlib.sha1(traj.task_intent.encode()).hexdigest()
        for i, step in enumerate(steps):
            try:
                dumped = step.model_dump_json()
            except ValueError:  # pydantic's depth limit, ~250 levels (a 500 from the server)
                raise InputError.bad(
                    f"trajectory.steps[{i}]",
                    "a step whose values nest fewer than about 250 levels deep",
                    "one nested too deep to serialise",
                ) from None
            digest = hashlib.sha1((digest + dumped).encode()).hexdigest()
            values: dict[str, bool] = {}
            for name in names:
                if name in needed:
                    values[name] = self._history_value(traj, i, step, name, digest)
                else:
                    values[name] = False
            out.append(values)
        return out

    def _history_value(self, traj: Trajectory, i: int, step: Step, name: str, digest: str) -> bool:
        if name in step.predicates:
            return _truth(step.predicates[name], f"steps[{i}].predicates[{name!r}]") >= 0.5
        key = (digest, name)
        hit = self._memo.get(key)
        if hit is not None:
            self._memo.move_to_end(key)
            return hit
        checker = self._checkers.get(name)
        if checker is not None:
            ctx = CheckContext(
                history=tuple(traj.steps[:i]), action=step.action, task_intent=traj.task_intent
            )
            value = _truth(checker(ctx), name) >= 0.5
        elif self._is_action(name):
            value = step.action.name == name
        else:
            raise InputError(
                f"trajectory.steps[{i}]: predicate {name!r} has no checker and no recorded value; "
                f"declare a checker for it in the policy or record it in the step's 'predicates'",
                argument="trajectory",
            )
        self._memo[key] = value
        if len(self._memo) > 100_000:
            self._memo.popitem(last=False)
        return value

    def _candidate_values(
        self,
        traj: Trajectory,
        act: Action,
        names: set[str],
        toggled: str,
        evidence: Mapping[str, Any],
    ) -> dict[str, Any]:
        ctx = CheckContext(history=tuple(traj.steps), action=act, task_intent=traj.task_intent)
        values: dict[str, Any] = {}
        for name in sorted(names):
            if name == toggled:
                continue
            if name in evidence:
                values[name] = _evidence_value(evidence[name], name)
            elif name in self._checkers:
                values[name] = _evidence_value(self._checkers[name](ctx), name)
            elif self._is_action(name):
                values[name] = act.name == name
            # else: free (uncertain, marginalised by the circuit)
        return values

    # ------------------------------------------------------------------ checking

    def check(
        self, trajectory: Any, action: Any, *, evidence: Mapping[str, Any] | None = None
    ) -> Decision:
        """Whether ``action`` may run after ``trajectory``, with p_safe and the violated rules.

        Parameters
        ----------
        trajectory : Trajectory, mapping or list of steps
            What the agent did so far (the candidate is not part of it).
        action : Action, mapping or str
            The proposed action.
        evidence : mapping, optional
            Predicate -> truth value or probability for the candidate step; overrides checkers
            (give oracle values here, or the output of your own tools). On a policy action's
            predicate it decides whether the candidate instantiates that action (true from 0.5).
        """
        traj = _check_recorded(as_trajectory(trajectory), self.policy)
        act = as_action(action)
        evidence = _check_evidence(evidence, self.policy)
        matched = self.matched_actions(traj, act, evidence=evidence)
        if not matched:
            return self._unmatched(act, evidence)
        p_values: list[float] = []
        log_odds: list[float] = []
        methods: list[str] = []
        violated: list[ViolatedRule] = []
        shown: dict[str, Any] = {}
        for name, circuit, rules, names, history, candidate in self._grounded(
            traj, act, matched, evidence
        ):
            shown.update(candidate)
            for free in names - set(candidate) - {name}:
                shown.setdefault(free, None)
            shown[name] = True
            inference = circuit.infer(history, candidate, method=self.method)
            p_values.append(inference.p_safe)
            log_odds.append(inference.log_odds)
            methods.append(inference.method)
            for k in inference.violated:
                violated.append(self._violation(rules[k], candidate, name))
        # one circuit: its p_safe; several: their log-odds add up (the circuits' own: logit of a
        # p_safe near 1 lost digits, and of p_safe 1.0 beside 0.0 gave nan)
        if not p_values:  # the matched actions have no rules: nothing speaks for or against
            p_safe = 0.5
        elif len(p_values) == 1:
            p_safe = p_values[0]
        else:
            p_safe = float(expit(math.fsum(log_odds)))
        allowed = bool(decide(p_safe, self.epsilon))
        violated.sort(key=lambda v: -v.weight)
        threshold = (1.0 + self.epsilon) / 2.0
        verdict = "allowed" if allowed else "blocked"
        relation = ">=" if allowed else "<"
        text = f"{act.name}: {verdict} (p_safe {p_safe:.3f} {relation} {threshold:.3f})"
        if violated:
            text += "; violated: " + "; ".join(
                f"{v.rule_id} ({v.description or 'no description'})" for v in violated
            )
        return Decision(
            action=act.name,
            action_allowed=allowed,
            p_safe=p_safe,
            threshold=threshold,
            violated_rules=tuple(violated),
            explanation=text,
            circuits=tuple(matched),
            predicates=dict(sorted(shown.items())),
            methods=tuple(methods),
        )

    def features(
        self, trajectory: Any, action: Any, *, evidence: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """f_i(x, action happens) - f_i(x, it does not) for every rule of the policy (0 for rules
        outside the candidate's circuits): the features weights are learned from.

        Every candidate-step predicate must have a value (evidence or a checker); a probability
        counts as true from 0.5 (``check`` sums over it instead).
        """
        traj = _check_recorded(as_trajectory(trajectory), self.policy)
        act = as_action(action)
        evidence = _check_evidence(evidence, self.policy)
        out = np.zeros(len(self._rules))
        matched = self.matched_actions(traj, act, evidence=evidence)
        for name, circuit, rules, names, history, candidate in self._grounded(
            traj, act, matched, evidence
        ):
            hard = {
                k: bool(v >= 0.5) if not isinstance(v, bool) else v for k, v in candidate.items()
            }
            missing = sorted(names - set(hard) - {name})
            if missing:
                raise InputError.bad(
                    "evidence",
                    f"a value for every candidate-step predicate (missing {missing})",
                    evidence,
                )
            delta = circuit.delta_features(history, hard)
            for rule, d in zip(rules, delta, strict=True):
                out[self._index[rule.rule_id]] = d
        return out

    def _grounded(
        self, traj: Trajectory, act: Action, matched: list[str], evidence: Mapping[str, Any]
    ) -> Iterator[tuple[str, RuleCircuit, list[Rule], set[str], list[dict], dict[str, Any]]]:
        """Per matched policy action with rules: its circuit, rules, predicates, the history's
        values and the proposed step's (a rule in several matched circuits counts in the first)."""
        used: set[str] = set()
        for name in matched:
            circuit, rules, needed = self._circuit(name, used)
            used.update(r.rule_id for r in rules)
            if not rules:
                continue
            names = set().union(*(r.formula.predicates for r in rules)) | {name}
            history = self._history_values(traj, names, needed)
            candidate = self._candidate_values(traj, act, names, name, evidence)
            yield name, circuit, rules, names, history, candidate

    def _unmatched(self, act: Action, evidence: Mapping[str, Any]) -> Decision:
        why = not_instantiated(self.policy, act, evidence)
        if self.unknown_action == "error":
            if why:  # named like a policy action: 'expected one of [pay], got pay' alone misled
                raise InputError(
                    f"action: expected an action the policy covers {sorted(self.policy.actions)}, "
                    f"got {act.name!r}, but {why}",
                    argument="action",
                )
            raise InputError.bad(
                "action", f"an action the policy covers {sorted(self.policy.actions)}", act.name
            )
        allowed = self.unknown_action == "allow"
        return Decision(
            action=act.name,
            action_allowed=allowed,
            p_safe=float("nan"),
            threshold=(1.0 + self.epsilon) / 2.0,
            violated_rules=(),
            explanation=f"{act.name}: {'allowed' if allowed else 'blocked'} "
            f"({why or 'no rule covers this action'})",
        )

    def _violation(self, rule: Rule, candidate: Mapping[str, Any], toggled: str) -> ViolatedRule:
        parts = []
        for p in rule.predicates:
            if p.name == toggled:
                parts.append(f"{p.name}=True")
            elif p.name in candidate:
                v = candidate[p.name]
                parts.append(f"{p.name}={v}" if isinstance(v, bool) else f"P({p.name})={v:.2f}")
            else:
                parts.append(f"{p.name}=?")
        description = rule.description or rule.logic
        return ViolatedRule(
            rule_id=rule.rule_id,
            weight=self.weight(rule.rule_id),
            description=rule.description,
            explanation=f"{rule.logic} does not hold with {', '.join(parts)}",
            feedback=f"Do not {toggled} here unless this holds: {description}",
        )


def not_instantiated(policy: PolicyModel, act: Action, evidence: Mapping[str, Any]) -> str:
    """Why a candidate named like a policy action does not instantiate it ('' otherwise): the
    evidence (names in NFC) or its checker said no (below 0.5). For the guardrail's and the weight
    learner's refusals of an unmatched action ('expected [pay], got pay' alone was a riddle)."""
    name = act.name
    if name not in policy.actions:
        return ""
    if name in evidence:
        source = f"evidence[{name!r}] = {evidence[name]!r}"
    else:
        source = f"its checker for {name!r}"
    return (
        f"{source} says it is not a {name!r} action (below 0.5), and no other policy "
        "action matches it"
    )


def _truth(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)):
        return float(bool(value))
    if isinstance(value, (int, float, np.floating, np.integer)) and 0.0 <= float(value) <= 1.0:
        return float(value)
    raise InputError.bad(name, "a truth value or a probability in [0, 1]", value)


def _evidence_value(value: Any, name: str) -> bool | float:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    p = _truth(value, f"evidence[{name!r}]")
    if p in (0.0, 1.0):
        return bool(p)
    return p


def _check_recorded(traj: Trajectory, policy: PolicyModel) -> Trajectory:
    """Refuse a value recorded on a step for a predicate the policy does not declare, as
    evidence does: a misspelt one ('askd') was ignored, and the checker decided instead."""
    known = policy.predicates
    for i, step in enumerate(traj.steps):
        unknown = sorted(set(step.predicates) - set(known))
        if unknown:
            raise InputError(
                f"trajectory.steps[{i}].predicates: expected predicates the policy declares "
                f"{sorted(known)}, got {unknown}",
                argument="trajectory",
            )
    return traj


def _check_evidence(evidence: Mapping[str, Any] | None, policy: PolicyModel) -> dict[str, Any]:
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise InputError.bad(
            "evidence", "a mapping predicate -> truth value or probability", evidence
        )
    out = {}
    known = policy.predicates
    for name, value in nfc_keys(evidence, "evidence").items():  # names in NFC, as the policy's
        if name not in known:
            raise InputError.bad(
                "evidence", f"predicates the policy declares {sorted(known)}", name
            )
        out[name] = _evidence_value(value, name)
    return out
