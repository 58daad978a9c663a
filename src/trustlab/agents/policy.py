"""Policies, trajectories and decisions in the formats of ShieldAgent's action-based safety policy
model (ASPM), validated with pydantic.

A policy (:class:`PolicyModel`) holds rules over named predicates (:class:`Rule`, whose ``logic`` is
a formula of :mod:`trustlab.agents.logic`) and groups them per action (``actions``: action name ->
``soft_rule_ids``). trustlab adds three optional keys: ``checkers`` (predicate name -> the
specification of the checker that computes it, see :mod:`trustlab.agents.checkers`), ``weights``
(rule id -> weight; rules without one get the guardrail's default weight) and ``unknown_action``
(``"error"``, ``"allow"`` or ``"block"``: what a guardrail built on the policy does with an action
no policy action covers, unless it is given one itself; without the key, ``"error"``).

A trajectory (:class:`Trajectory`) is what the protected agent did so far: the task intent and a list
of steps, each with an optional thought, an action (:class:`Action`: a tool call or a web action)
and an optional observation.

>>> policy = load_policy({
...     "actions": {"send_money": {"soft_rule_ids": ["r1"]}},
...     "rule_list": [{
...         "rule_id": "r1",
...         "predicates": [["send_money", "the agent sends money", "", "action"],
...                        ["user_confirmed", "the user confirmed the payment", "", "condition"]],
...         "logic": "ALWAYS(send_money IMPLIES user_confirmed)",
...         "description": "Never send money without the user's confirmation.",
...     }],
... })
>>> policy.rule("r1").formula.predicates == {"send_money", "user_confirmed"}
True
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    ValidationError,
    field_validator,
    model_validator,
)

from trustlab._checks import repeated, unique_keys
from trustlab.agents._names import Name, NameKeys, nfc, nfc_keys
from trustlab.agents.logic import RESERVED_WORDS, Formula, parse_rule
from trustlab.errors import InputError, describe

#: The largest rule weight (log-odds) a policy takes. A weight's rounding error grows with it
#: (about w * 2.2e-16 in p_safe: 1e-11 at 1e6), beyond about 1e15 it swamps the evidence's
#: probabilities (P(ok) = 0.5 then decides as if certain) and near 1e308 the compiled circuit
#: returns NaN; e**-1e4 is 0 in double precision already, and learned weights (L2-regularised)
#: stay far below.
MAX_RULE_WEIGHT = 1e4

__all__ = [
    "Action",
    "Step",
    "Trajectory",
    "Predicate",
    "Rule",
    "GroundedRule",
    "PolicyModel",
    "load_policy",
    "as_trajectory",
    "as_action",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Action(_Model):
    """One action of an agent: a tool call (``name`` and ``arguments``) or a web action.

    A bare string is read as the action's name: ``Action.model_validate("click")``.
    """

    name: Name = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    url: str | None = None
    element: str | None = None
    text: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        return data


class Step(_Model):
    """One step of a trajectory: the agent's thought, its action and what it observed.

    ``predicates`` may record predicate values already known at this step (a truth value or a
    probability); they take precedence over the policy's checkers.
    """

    thought: str | None = None
    action: Action
    observation: str | None = None
    predicates: dict[str, bool | float] = Field(default_factory=dict)

    @field_validator("predicates", mode="before")
    @classmethod
    def _truth_values(cls, value: Any) -> Any:
        # as strict as a guardrail's evidence: pydantic alone reads "yes", "no", "1" as truth
        # values, and a 2.0 would only be caught when a rule needs it
        if isinstance(value, Mapping):
            for name, v in value.items():
                number = isinstance(v, (int, float, np.integer, np.floating))
                if not isinstance(v, (bool, np.bool_)) and not (number and 0.0 <= v <= 1.0):
                    raise ValueError(
                        f"{name!r}: expected a truth value or a probability in [0, 1], "
                        f"got {describe(v)}"
                    )
        return nfc_keys(value)


class Trajectory(_Model):
    """What the protected agent did so far: the task intent, the policies in force and the steps."""

    task_intent: str = ""
    policies: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trajectory:
        """Read ``{"task_intent", "policies", "steps"}`` or the ShieldAgent conversation format.

        The conversation format is ``{"task_intent", "policies", "conversation": [{"role": "agent",
        "messages": [{"thought": ...}, {"action": ...}]}, ...]}``: every ``action`` message closes a
        step (with the thoughts before it); the text of a turn by another role (``user``,
        ``environment``, ``tool``) becomes the observation of the step before it; a ``user``
        turn before the first step (the request itself) is added to ``task_intent``. An agent
        message without ``thought`` or ``action``, an action in another role's turn, or a turn with
        ``content`` but no role (an agent turn by default) is refused (it was dropped); errors
        name the turn and message (``conversation[1].messages[0]``).
        """
        if not isinstance(data, Mapping):
            raise InputError.bad("trajectory", "a mapping (JSON object)", data)
        if "conversation" not in data:
            return _validate(cls, data, "trajectory")
        if "steps" in data:  # the conversation's steps replaced them (a payment made was lost)
            raise InputError.bad("trajectory", "'steps' or 'conversation', not both", list(data))
        conversation = data["conversation"]
        if not isinstance(conversation, list):
            raise InputError.bad("trajectory.conversation", "a list of turns", conversation)
        steps: list[dict[str, Any]] = []
        request: list[str] = []  # user turns before the first step: the task's own words
        for t, turn in enumerate(conversation):
            where = f"trajectory.conversation[{t}]"
            if not isinstance(turn, Mapping):
                raise InputError.bad(where, "a turn {'role': ..., 'messages': [...]}", turn)
            messages = turn.get("messages")
            if messages is None:
                messages = []
            elif isinstance(messages, (str, Mapping)):
                messages = [messages]
            if not isinstance(messages, list):  # iterating it raised TypeError
                raise InputError.bad(f"{where}.messages", "a list of messages", messages)
            role = turn.get("role", "agent")
            if not isinstance(role, str):
                raise InputError.bad(f"{where}.role", "a role name such as 'agent' or 'user'", role)
            if role != "agent":
                if any(isinstance(m, Mapping) and "action" in m for m in messages):
                    # read as observation text, the action was silently lost from the history
                    raise InputError.bad(
                        f"{where}.role", "'agent' for a turn with action messages", role
                    )
                text = turn.get("content")
                if text is not None and not isinstance(text, str):  # a tool's JSON output
                    text = json.dumps(text, ensure_ascii=False)
                if text is None:
                    text = "\n".join(m if isinstance(m, str) else json.dumps(m) for m in messages)
                if steps:
                    previous = steps[-1].get("observation")
                    steps[-1]["observation"] = text if previous is None else f"{previous}\n{text}"
                elif role == "user" and text:  # it was dropped: a payment to the IBAN it named
                    request.append(text)  # was blocked as coming from nowhere
                continue
            if turn.get("content") is not None:  # its text would be dropped: no role was given?
                raise InputError(
                    f"{where}: expected an agent turn's thoughts and actions under 'messages', "
                    f"got 'content' (give the turn the role whose text it is: 'user', 'tool', "
                    "...)",
                    argument=where,
                )
            thoughts: list[str] = []
            for m, message in enumerate(messages):
                if not isinstance(message, Mapping):
                    raise InputError.bad(
                        f"{where}.messages[{m}]", "{'thought': ...} or {'action': ...}", message
                    )
                if "thought" not in message and "action" not in message:  # was dropped silently
                    raise InputError.bad(
                        f"{where}.messages[{m}]", "{'thought': ...} or {'action': ...}", message
                    )
                if "thought" in message:
                    thoughts.append(str(message["thought"]))
                if "action" in message:  # named by its turn and message, not its step's index
                    action = _validate(Action, message["action"], f"{where}.messages[{m}].action")
                    step: dict[str, Any] = {"action": action}
                    if thoughts:
                        step["thought"] = "\n".join(thoughts)
                        thoughts = []
                    steps.append(step)
        rest = {k: v for k, v in data.items() if k != "conversation"}
        intent = rest.get("task_intent")
        request = [text for text in request if text != intent]  # the intent repeated as a turn
        if request and (intent is None or isinstance(intent, str)):
            rest["task_intent"] = "\n".join([intent, *request] if intent else request)
        return _validate(cls, {**rest, "steps": steps}, "trajectory")

    def history(self, n: int | None = None) -> tuple[Step, ...]:
        """The first ``n`` steps (all of them when ``n`` is None)."""
        return tuple(self.steps if n is None else self.steps[:n])


class Predicate(_Model):
    """A predicate a rule mentions: its name, what it means and whether it is an action."""

    name: Name
    description: str = ""
    type: Literal["action", "condition"] = "condition"

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        # ASPM writes predicates as [name, description, _, type] (grounded: [name, description, type])
        if isinstance(data, (list, tuple)):
            if len(data) in (3, 4):  # the type comes last in both
                return {"name": data[0], "description": data[1], "type": data[-1]}
            if len(data) in (1, 2):
                return {"name": data[0], "description": data[1] if len(data) == 2 else ""}
            raise ValueError(f"a predicate is [name, description, _, type]; got {data!r}")
        return data


def _parsed(logic: str, rule_id: str) -> Formula:
    try:
        return parse_rule(logic)
    except InputError as err:
        raise ValueError(f"rule {rule_id!r}: {err}") from None


class Rule(_Model):
    """A verifiable rule: predicates, the formula over them (``logic``) and what it means."""

    rule_id: Name = Field(min_length=1)
    predicates: list[Predicate]
    logic: Name = Field(min_length=1)
    description: str = ""
    rule_type: Literal["action", "physical"] = "action"

    @model_validator(mode="after")
    def _check_logic(self) -> Rule:
        declared = {p.name for p in self.predicates}
        first: dict[str, Predicate] = {}
        for p in self.predicates:  # the second declaration was ignored without a word
            if first.setdefault(p.name, p) != p:
                raise ValueError(
                    f"rule {self.rule_id!r}: predicate {p.name!r} is declared twice, as "
                    f"{first[p.name].model_dump()} and {p.model_dump()}; declare it once"
                )
        # the logic reads such a name as the word ("pay IMPLIES true" is pay IMPLIES TRUE): the
        # predicate would be declared, take evidence and a checker, and never count
        reserved = sorted(n for n in declared if n.upper() in RESERVED_WORDS)
        if reserved:
            raise ValueError(
                f"rule {self.rule_id!r}: predicate name(s) {reserved} are words of the rule "
                "language (read as the operator or constant in any case); rename them"
            )
        formula = _parsed(self.logic, self.rule_id)  # after the names: "pay IMPLIES next" fails
        undeclared = sorted(formula.predicates - declared)
        if undeclared:
            raise ValueError(
                f"rule {self.rule_id!r}: its logic names the undeclared predicate(s) "
                f"{undeclared}; declared: {sorted(declared)}"
            )
        return self

    @cached_property
    def formula(self) -> Formula:
        """The parsed ``logic``."""
        return parse_rule(self.logic)

    def predicate(self, name: str) -> Predicate | None:
        return next((p for p in self.predicates if p.name == nfc(name)), None)


class GroundedRule(_Model):
    """A rule specialised to a concrete context (ShieldAgent's grounding step).

    The predicates the logic mentions must be exactly the declared ones.
    """

    source_rule_id: Name
    grounded_rule_id: Name
    grounded_predicates: list[Predicate]
    rule_logic: Name
    rule_description: str = ""

    @model_validator(mode="after")
    def _check_logic(self) -> GroundedRule:
        formula = _parsed(self.rule_logic, self.grounded_rule_id)
        declared = {p.name for p in self.grounded_predicates}
        if formula.predicates != declared:
            raise ValueError(
                f"grounded rule {self.grounded_rule_id!r}: the logic's predicates "
                f"{sorted(formula.predicates)} differ from the declared ones {sorted(declared)}"
            )
        return self

    def as_rule(self) -> Rule:
        return Rule(
            rule_id=self.grounded_rule_id,
            predicates=self.grounded_predicates,
            logic=self.rule_logic,
            description=self.rule_description,
        )


class _ActionEntry(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    soft_rule_ids: list[Name] = Field(default_factory=list)


def _refuse_near_misses(model: BaseModel, what: str) -> None:
    """Refuse an extra key spelt almost like one of the model's fields (others are kept)."""
    for key in model.model_extra or {}:
        if close := difflib.get_close_matches(str(key), list(type(model).model_fields), 1, 0.8):
            raise ValueError(f"{what} {key!r} is not a policy key; did you mean {close[0]!r}?")


class PolicyModel(_Model):
    """An action-based safety policy model (ShieldAgent's ASPM JSON, plus ``checkers``,
    ``weights`` and ``unknown_action``).

    Validation: at least one rule and one action; unique rule ids; each ``soft_rule_id`` names a
    rule whose logic mentions the action, once, and every rule is listed; a predicate is not
    declared two ways in a rule, has one type in all (an action's name aside) and is no word of the
    rule language; an acyclic action tree; each logic parses and names declared predicates only;
    weights are numbers (not "0" or true) in +-MAX_RULE_WEIGHT for known rules; a checker has a
    ``type`` and a declared predicate; ``unknown_action`` is error/allow/block; no near-miss key.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    action_tree: dict[str, Any] = Field(default_factory=dict)
    actions: Annotated[dict[str, _ActionEntry], NameKeys]
    rule_list: list[Rule]
    condition_clusters: Any = None
    checkers: Annotated[dict[str, dict[str, Any]], NameKeys] = Field(default_factory=dict)
    # strict: pydantic would read "0" as 0.0 and true as 1.0 (a rule switched off without a word)
    weights: Annotated[dict[str, StrictFloat], NameKeys] = Field(default_factory=dict)
    # None (absent): the guardrail's own setting, "error" by default (as before the key existed)
    unknown_action: Literal["error", "allow", "block"] | None = None

    @field_validator("rule_list")
    @classmethod
    def _rules_present(cls, rules: list[Rule]) -> list[Rule]:
        if not rules:
            raise ValueError("the policy has no rules (rule_list is empty)")
        seen: set[str] = set()
        for rule in rules:
            if rule.rule_id in seen:
                raise ValueError(f"rule id {rule.rule_id!r} appears twice in rule_list")
            seen.add(rule.rule_id)
        return rules

    @field_validator("actions")
    @classmethod
    def _actions_present(cls, actions: dict[str, _ActionEntry]) -> dict[str, _ActionEntry]:
        if not actions:
            raise ValueError("the policy has no actions (actions is empty)")
        return actions

    @model_validator(mode="after")
    def _cross_check(self) -> PolicyModel:
        _refuse_near_misses(self, "key")  # 'weight': every rule weighed the default 1
        for action, entry in self.actions.items():  # 'soft_rule_id': the action had no rules
            _refuse_near_misses(entry, f"actions[{action!r}] key")
        ids = {r.rule_id: r for r in self.rule_list}
        for action, entry in self.actions.items():
            unknown = [r for r in entry.soft_rule_ids if r not in ids]
            if unknown:
                raise ValueError(f"action {action!r} names unknown rule id(s) {unknown}")
            twice = repeated(entry.soft_rule_ids)
            if twice:  # the circuit refused it at the first check, naming its own rule_ids
                raise ValueError(f"action {action!r} lists rule id(s) {twice} more than once")
            # a rule whose logic never names the action cannot move its decision (the circuit
            # toggles the action's predicate): it would be switched off without a word
            inert = [r for r in entry.soft_rule_ids if action not in ids[r].formula.predicates]
            if inert:
                raise ValueError(
                    f"action {action!r} lists rule(s) {inert} whose logic never mentions "
                    f"{action!r}, so they could never affect its decision; name the action "
                    "predicate like the action, or list the rules under the action they name"
                )
        listed = {r for entry in self.actions.values() for r in entry.soft_rule_ids}
        if unlisted := [r for r in ids if r not in listed]:  # never checked, without a word
            raise ValueError(f"rule(s) {unlisted} are listed under no action (soft_rule_ids)")
        for rule_id, weight in self.weights.items():
            if rule_id not in ids:
                raise ValueError(f"weights: unknown rule id {rule_id!r}")
            if not abs(weight) <= MAX_RULE_WEIGHT:
                raise ValueError(
                    f"weights[{rule_id!r}]: expected a finite number in [-{MAX_RULE_WEIGHT:g}, "
                    f"{MAX_RULE_WEIGHT:g}] (a larger weight swamps every probability in double "
                    f"precision), got {weight!r}"
                )
        kinds: dict[str, dict[str, list[str]]] = {}
        for rule in self.rule_list:
            for p in rule.predicates:
                kinds.setdefault(p.name, {}).setdefault(p.type, []).append(rule.rule_id)
        for name, by_type in kinds.items():
            # the first declaration won: the rules' order changed decisions (a policy action is
            # an action whatever its rules say)
            if len(by_type) > 1 and name not in self.actions:
                raise ValueError(
                    f"predicate {name!r} is declared as an action in rule(s) {by_type['action']} "
                    f"and as a condition in rule(s) {by_type['condition']}; declare one type"
                )
        declared = set(kinds) | set(self.actions)
        for name, spec in self.checkers.items():
            if name not in declared:
                raise ValueError(
                    f"checkers: predicate {name!r} is not declared by any rule or action"
                )
            if "type" not in spec:
                raise ValueError(f"checkers[{name!r}]: expected a 'type' key, got {spec!r}")
        cycle = _tree_cycle(self.action_tree)
        if cycle:
            raise ValueError(f"action_tree has a cycle: {' -> '.join(cycle)}")
        return self

    def rule(self, rule_id: str) -> Rule:
        """The rule with id ``rule_id``."""
        for rule in self.rule_list:
            if rule.rule_id == nfc(rule_id):  # ids are NFC
                return rule
        raise InputError.bad("rule_id", f"one of {sorted(self.rule_ids)}", rule_id)

    @property
    def rule_ids(self) -> list[str]:
        return [r.rule_id for r in self.rule_list]

    def rules_for(self, action: str) -> list[Rule]:
        """The rules in ``action``'s circuit (its ``soft_rule_ids``)."""
        if (action := nfc(action)) not in self.actions:  # names are NFC
            raise InputError.bad(
                "action", f"one of the policy's actions {sorted(self.actions)}", action
            )
        return [self.rule(r) for r in self.actions[action].soft_rule_ids]

    @property
    def predicates(self) -> dict[str, Predicate]:
        """Every declared predicate by name (the first declaration wins) plus one per action."""
        out: dict[str, Predicate] = {}
        for rule in self.rule_list:
            for p in rule.predicates:
                out.setdefault(p.name, p)
        for action in self.actions:
            out.setdefault(action, Predicate(name=action, type="action"))
        return out

    def as_json(self) -> dict[str, Any]:
        """The policy as plain JSON data (what :func:`load_policy` reads back)."""
        return self.model_dump(mode="json", exclude_defaults=True)


def _tree_cycle(tree: Mapping[str, Any]) -> list[str] | None:
    """A cycle in an ASPM action tree (parent -> L2/L3 children), or None."""
    edges: dict[str, list[str]] = {}

    def collect(name: str, node: Any) -> None:
        children: list[Any] = []
        if isinstance(node, Mapping):
            for key in ("L2_children", "L3_children", "children"):
                value = node.get(key)
                if isinstance(value, Mapping):
                    children.extend(value.items())
                elif isinstance(value, list):
                    children.extend(
                        (c, None) if isinstance(c, str) else (c.get("name", ""), c)
                        for c in value
                        if isinstance(c, (str, Mapping))
                    )
        for child, sub in children:
            edges.setdefault(name, []).append(str(child))
            if sub is not None:
                collect(str(child), sub)

    for name, node in tree.items():
        collect(str(name), node)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for child in edges.get(node, []):
            if state.get(child) == 1:
                return path[path.index(child) :] + [child]
            if state.get(child) is None:
                found = visit(child)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in list(edges):
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def _validate(model: type[BaseModel], data: Any, argument: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        location = f"{argument}.{where}" if where else argument
        if first["type"] != "value_error":  # pydantic's own checks: say what came
            message = f"{message[:1].lower()}{message[1:]}, got {describe(first.get('input'))}"
        raise InputError(f"{location}: {message}", argument=argument) from None


def load_policy(policy: PolicyModel | Mapping[str, Any] | str | Path) -> PolicyModel:
    """Read and validate a policy: a :class:`PolicyModel` (returned as it is), a mapping, or the
    path (a ``str`` or ``Path``, never JSON text) of a UTF-8 JSON file (a BOM is allowed).

    Raises
    ------
    InputError
        Starting ``policy``: another type, a path that is not a file, a file that is not UTF-8 JSON,
        or what :class:`PolicyModel` refuses (its docstring lists it), naming where.
    """
    if isinstance(policy, PolicyModel):
        return policy
    if isinstance(policy, (str, Path)):
        path = Path(policy)
        if not path.is_file():
            raise InputError.bad("policy", "a policy JSON file that exists", str(policy))
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=unique_keys)
        except ValueError as err:  # not UTF-8 or JSON, a 4300-digit integer, a key given twice
            raise InputError(
                f"policy: {path} is not valid UTF-8 JSON ({err})", argument="policy"
            ) from None
        return _validate(PolicyModel, data, "policy")
    if isinstance(policy, Mapping):
        return _validate(PolicyModel, policy, "policy")
    raise InputError.bad("policy", "a PolicyModel, a mapping or a JSON file path", policy)


def as_trajectory(trajectory: Any) -> Trajectory:
    """A :class:`Trajectory` from itself, a mapping (either format) or a list of steps/actions."""
    if isinstance(trajectory, Trajectory):
        return trajectory
    if trajectory is None:
        return Trajectory()
    if isinstance(trajectory, Mapping):
        return Trajectory.from_dict(trajectory)
    if isinstance(trajectory, (list, tuple)):
        steps = [
            s if isinstance(s, (Step, Mapping)) and _is_step(s) else {"action": s}
            for s in trajectory
        ]
        return _validate(Trajectory, {"steps": steps}, "trajectory")
    raise InputError.bad("trajectory", "a Trajectory, a mapping or a list of steps", trajectory)


def _is_step(value: Any) -> bool:
    return isinstance(value, Step) or (isinstance(value, Mapping) and "action" in value)


def as_action(action: Any) -> Action:
    """An :class:`Action` from itself, a mapping or a name."""
    if isinstance(action, Action):
        return action
    if isinstance(action, (str, Mapping)):
        return _validate(Action, action, "action")
    raise InputError.bad(
        "action", "an Action, a mapping {'name': ..., 'arguments': ...} or a name", action
    )
