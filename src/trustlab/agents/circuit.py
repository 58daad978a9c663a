"""Rule circuits: the probability that a proposed action is safe under weighted policy rules.

A rule circuit groups the weighted rules ``(formula_i, w_i)`` that concern one action ``a``. It is a
Markov logic network over the predicates of the *candidate step* (the step the agent proposes):
the action indicator ``v_a`` (the predicate named like the action) and the state predicates ``x``.
A world (an assignment of the candidate step) scores ``exp(sum_i w_i f_i)``, where ``f_i = 1`` iff
rule ``i`` holds on the finite trace *history + candidate step*, in LTLf semantics at position 0
(:func:`trustlab.agents.logic.evaluate`). So a rule without temporal operators speaks about the
first step of the trace; write ``ALWAYS (...)`` for a constraint on every step, the candidate
included. The history is fixed and fully known, so each rule reduces to a Boolean function of the
candidate step alone (its residual, :func:`trustlab.agents.logic.residual`), which the circuit
tabulates; a rule already violated (or already satisfied for good) by the history is constant and
contributes nothing.

The safety probability is ``p_safe = P(v_a = 1 | evidence)``. Evidence maps candidate-step
predicates to

- a bool: hard evidence (the predicate is fixed);
- a probability ``q`` in [0, 1]: soft evidence, a unit factor ``q^x (1 - q)^(1 - x)`` (weight
  ``log(q / (1 - q))``); ``q`` of exactly 0 or 1 is hard evidence;
- nothing: a free predicate (no unit factor), summed over.

With hard evidence only, ``p_safe = sigmoid(sum_i w_i (f_i(x, 1) - f_i(x, 0)))`` (closed form).
Otherwise trustlab sums over the free and soft predicates exactly: by vectorised enumeration of
the ``2^F`` worlds, or by weighted model counting on a sentential decision diagram compiled with
PySDD (``pip install 'trustlab[agents]'``) when ``F`` is large. Only the predicates connected to the
action through rules that still depend on them count towards ``F``: the rest cancel exactly.

Evidence for predicates that no rule of the circuit mentions is ignored (a guardrail passes the
evidence of a whole policy to every circuit), but its values are still validated.

The decision rule (:func:`decide`) allows the action iff ``p_safe - (1 - p_safe) >= epsilon``.
(:class:`~trustlab.agents.Guardrail` judges a rule without temporal operators at the candidate
step instead: see :func:`trustlab.agents.guardrail.anchored`.)

Why this module is long: exact inference has three paths (closed form, enumeration, compiled
sentential decision diagrams) over one tabulation of the rules' residuals, which must agree to
1e-9; keeping them in one module keeps that tabulation and its cache in one place.

>>> from trustlab.agents.logic import Always, Implies, Pred
>>> circuit = RuleCircuit("send", [(Always(Implies(Pred("send"), Pred("confirmed"))), 2.0)])
>>> round(circuit.p_safe([], {"confirmed": False}), 4)  # sigmoid(-2)
0.1192
>>> round(circuit.p_safe([], {"confirmed": 0.5}), 4)  # (0.5 + 0.5 e^2) / (0.5 + 0.5 e^2 + e^2)
0.3621
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_in_range, check_positive_int
from trustlab._lazy import require
from trustlab._results import Result, internal_field
from trustlab.agents.logic import (
    Always,
    And,
    Const,
    Eventually,
    Formula,
    Implies,
    Next,
    Not,
    Or,
    Pred,
    Release,
    Until,
    WeakNext,
)
from trustlab.agents.policy import MAX_RULE_WEIGHT
from trustlab.errors import ConfigError, InputError

__all__ = ["RuleCircuit", "CircuitInference", "decide", "METHODS"]

#: The inference methods of :meth:`RuleCircuit.p_safe`.
METHODS = ("auto", "closed_form", "enumerate", "compiled")

#: Most predicates one rule may mention (its residual is tabulated over 2**k candidate steps).
MAX_RULE_PREDICATES = 20

#: ``method="auto"`` enumerates up to this many free or soft predicates even when a compiled
#: circuit is cached (enumeration then costs well under a millisecond).
_ALWAYS_ENUMERATE = 8

#: Slack of :func:`decide` for rounding in exact inference.
_DECISION_TOLERANCE = 1e-12

#: Largest ``max_enumerate`` accepted (2**24 worlds take about 0.5 GB of score arrays).
MAX_ENUMERATE = 24


def decide(p_safe: float, epsilon: float = 0.0) -> bool:
    """Whether to allow an action: ``p_safe - (1 - p_safe) >= epsilon``, i.e. ``p_safe >= (1+eps)/2``.

    An action that satisfies every rule and that no rule rewards has ``p_safe = 1/2`` exactly, so
    with ``epsilon = 0`` the decision sits on a tie; ``p_safe`` within ``1e-12`` below the threshold
    (rounding in the enumerated or compiled sums) counts as reaching it.

    Parameters
    ----------
    p_safe : float
        The probability that the action is safe, in [0, 1].
    epsilon : float, default 0.0
        The required margin of "safe" over "unsafe", in (-1, 1). ``epsilon = 0`` allows every action
        at least as likely safe as unsafe. Prohibitions (``a IMPLIES c``) can only be kept or
        broken by acting, so an action that keeps every such rule has ``p_safe = 1/2`` and any
        doubt about a predicate (soft evidence) puts it below; a negative ``epsilon`` tolerates
        that doubt (an obligation such as ``c IMPLIES a`` kept by acting raises ``p_safe``). It is the same as a prior for
        the proposed action of log-odds ``log((1 - epsilon) / (1 + epsilon))``.

    Returns
    -------
    bool
        True to allow the action.

    Examples
    --------
    >>> decide(0.6, 0.2), decide(0.59, 0.2), decide(0.5), decide(0.45, -0.2)
    (True, False, True, True)
    """
    p = check_in_range(p_safe, "p_safe", 0.0, 1.0)
    eps = check_in_range(epsilon, "epsilon", -1.0, 1.0, low_open=True, high_open=True)
    return p >= (1.0 + eps) / 2.0 - _DECISION_TOLERANCE  # p - (1 - p) >= eps, without rounding


@dataclass(frozen=True)
class CircuitInference(Result):
    """Everything one query of a :class:`RuleCircuit` gives (see :meth:`RuleCircuit.infer`).

    Attributes
    ----------
    action : str
        The circuit's action predicate.
    p_safe : float
        ``P(v_a = 1 | evidence)``.
    method : str
        The method that computed ``p_safe`` (``"closed_form"``, ``"enumerate"`` or ``"compiled"``).
    free_predicates : tuple of str
        The free or soft predicates the sum ran over (those that can move ``p_safe``).
    rule_ids : tuple of str
        The circuit's rules.
    violation_probabilities : tuple of float
        ``P(f_i(x, v_a=1) = 0)`` per rule (see :meth:`RuleCircuit.violation_probabilities`).
    violated : tuple of int
        The violated rules (indices), most important first (see :meth:`RuleCircuit.violated`).
    """

    action: str
    p_safe: float
    method: str
    free_predicates: tuple[str, ...]
    rule_ids: tuple[str, ...]
    violation_probabilities: tuple[float, ...]
    violated: tuple[int, ...]
    #: ``log(p_safe / (1 - p_safe))`` as computed (exact where p_safe rounds to 0 or 1): the
    #: guardrail adds several circuits' log-odds
    log_odds: float = internal_field(default=math.nan)

    _dict_extras = ("violated_ids",)

    @property
    def violated_ids(self) -> list[str]:
        """The ids of the violated rules, most important first."""
        return [self.rule_ids[i] for i in self.violated]

    def summary(self) -> str:
        lines = [
            f"RuleCircuit({self.action!r}): p_safe = {self.p_safe:.6g} ({self.method}, "
            f"{len(self.free_predicates)} free or soft predicates)"
        ]
        if self.violated:
            lines.append("  violated: " + ", ".join(self.violated_ids))
        return "\n".join(lines)


@dataclass(frozen=True)
class _Evidence:
    """Validated evidence for the circuit's state predicates (indices into ``predicates``)."""

    hard: dict[int, int]  # predicate index -> 0/1
    soft: dict[int, float]  # predicate index -> q in (0, 1)


class RuleCircuit:
    """The weighted rules of one action and exact inference of ``P(action is safe | evidence)``.

    Parameters
    ----------
    action : str
        The action predicate ``v_a`` (its name in the rule formulas). A circuit whose rules never
        mention it gives ``p_safe = 0.5``.
    rules : sequence of (Formula, float)
        The rules (:mod:`trustlab.agents.logic` formulas, at most 20 predicates each) and their
        weights, in [-1e4, 1e4] as a policy's (``trustlab.agents.policy.MAX_RULE_WEIGHT``); a
        positive weight favours worlds where the rule holds.
    rule_ids : sequence of str, optional
        One unique id per rule (default ``"0"``, ``"1"``, ...).
    max_enumerate : int, default 20
        Most free or soft predicates ``method="enumerate"`` sums over (at most 24).
    auto_enumerate : int, default 16
        ``method="auto"`` enumerates up to this many free or soft predicates and uses the compiled
        circuit beyond; from 9 predicates on it also uses the compiled circuit whenever one for
        the same rule residuals is already cached. ``benchmarks/bench_guardrail.py`` sets these
        switches: on 20-rule circuits enumeration takes about 1.5 ms at 12 free predicates and
        3 ms at 16, then doubles per predicate (0.15 s at 20), while compiling takes 10-25 ms
        and a query on a compiled circuit 0.3-0.6 ms. Without PySDD, ``"auto"`` enumerates up to
        ``max_enumerate``.
    cache_size : int, default 64
        Compiled circuits kept (one per distinct set of rule residuals; least recently used out).

    Notes
    -----
    Inference is exact. ``"enumerate"`` costs ``O(2^F * sum_i k_i)`` for ``F`` free or soft
    predicates and rules of ``k_i`` predicates; ``"compiled"`` compiles the rule residuals once
    into a sentential decision diagram (rule ``i`` as ``r_i <-> residual_i`` with literal weights
    ``exp(w_i)`` and 1 on ``r_i``; ``(q, 1 - q)``, ``(1, 0)``, ``(0, 1)`` or ``(1, 1)`` on a soft, hard
    true, hard false or free predicate) and then costs two weighted model counts, in log space,
    linear in the diagram's size. Hard evidence only changes literal weights, so one compiled
    diagram serves every query whose history leaves the same residuals.

    The history is walked once per query, all rules on Python integers used as bit sets (one bit
    per candidate-step assignment of the rule's predicates), with the LTLf recurrences of
    :func:`trustlab.agents.logic.evaluate`.

    Instances are safe to share between threads.

    Examples
    --------
    >>> from trustlab.agents.logic import Always, Implies, Not, Pred
    >>> rules = [
    ...     (Always(Implies(Pred("pay"), Pred("iban_known"))), 3.0),
    ...     (Always(Implies(Pred("pay"), Not(Pred("over_limit")))), 1.5),
    ... ]
    >>> circuit = RuleCircuit("pay", rules, rule_ids=["known-iban", "limit"])
    >>> history = [{"pay": False, "iban_known": False, "over_limit": False}]
    >>> evidence = {"iban_known": True, "over_limit": True}
    >>> round(circuit.p_safe(history, evidence), 4)  # sigmoid(-1.5)
    0.1824
    >>> [circuit.rule_ids[i] for i in circuit.violated(history, evidence)]
    ['limit']
    >>> result = circuit.infer(history, {"iban_known": 0.9, "over_limit": False})
    >>> # (0.9 e^3 + 0.1) / (0.9 e^3 + 0.1 + e^3): not paying satisfies the rule whatever the IBAN
    >>> round(result.p_safe, 4), result.method, result.violated_ids
    (0.4751, 'enumerate', [])
    """

    def __init__(
        self,
        action: str,
        rules: Sequence[tuple[Formula, float]],
        *,
        rule_ids: Sequence[str] | None = None,
        max_enumerate: int = 20,
        auto_enumerate: int = 16,
        cache_size: int = 64,
    ) -> None:
        if not isinstance(action, str) or not action:
            raise InputError.bad("action", "a non-empty predicate name", action)
        if isinstance(rules, (str, bytes, Mapping)) or not isinstance(rules, Sequence):
            raise InputError.bad("rules", "a sequence of (formula, weight) pairs", rules)
        formulas: list[Formula] = []
        weights: list[float] = []
        for i, item in enumerate(rules):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise InputError.bad(f"rules[{i}]", "a (formula, weight) pair", item)
            formula, weight = item
            if not isinstance(formula, Formula):
                raise InputError.bad(f"rules[{i}]", "a trustlab.agents.logic formula", formula)
            if isinstance(weight, (bool, np.bool_)) or not isinstance(
                weight, (int, float, np.integer, np.floating)
            ):
                raise InputError.bad(f"rules[{i}] weight", "a finite number", weight)
            if not abs(float(weight)) <= MAX_RULE_WEIGHT:  # NaN fails too
                # larger weights swamp the others in double precision (at 1e16 a rule of
                # weight 1 beside one of 1e16 no longer counted) and overflow near 1e308 (NaN)
                raise InputError.bad(
                    f"rules[{i}] weight",
                    f"a finite number in [-{MAX_RULE_WEIGHT:g}, {MAX_RULE_WEIGHT:g}]",
                    weight,
                )
            if len(formula.predicates) > MAX_RULE_PREDICATES:
                raise InputError.bad(
                    f"rules[{i}]",
                    f"a rule mentioning at most {MAX_RULE_PREDICATES} predicates",
                    f"{len(formula.predicates)} predicates",
                )
            formulas.append(formula)
            weights.append(float(weight))
        if rule_ids is None:
            ids = tuple(str(i) for i in range(len(formulas)))
        else:
            if isinstance(rule_ids, (str, bytes)) or not isinstance(rule_ids, Sequence):
                raise InputError.bad("rule_ids", "a sequence of strings", rule_ids)
            ids = tuple(rule_ids)
            if len(ids) != len(formulas):
                raise InputError.bad("rule_ids", f"{len(formulas)} ids, one per rule", rule_ids)
            if not all(isinstance(r, str) for r in ids) or len(set(ids)) != len(ids):
                raise InputError.bad("rule_ids", "unique strings", rule_ids)
        self.max_enumerate = check_positive_int(max_enumerate, "max_enumerate")
        if self.max_enumerate > MAX_ENUMERATE:
            raise InputError.bad("max_enumerate", f"an integer <= {MAX_ENUMERATE}", max_enumerate)
        self.auto_enumerate = check_positive_int(auto_enumerate, "auto_enumerate", minimum=0)
        self.cache_size = check_positive_int(cache_size, "cache_size")

        self.action = action
        self.formulas: tuple[Formula, ...] = tuple(formulas)
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        w.setflags(write=False)
        self.weights = w
        self.rule_ids: tuple[str, ...] = ids
        names: set[str] = set().union(*(f.predicates for f in formulas))
        self._needed = tuple(sorted(names))
        names.discard(action)
        #: Every candidate-step predicate: the action first, then the state predicates (sorted).
        self.predicates: tuple[str, ...] = (action, *sorted(names))
        self._index = {name: i for i, name in enumerate(self.predicates)}
        self._scopes = [tuple(sorted(self._index[p] for p in f.predicates)) for f in formulas]
        self._programs = [
            _program(f, {self.predicates[j]: n for n, j in enumerate(scope)}, len(scope))
            for f, scope in zip(formulas, self._scopes, strict=True)
        ]
        # bit position of each scope predicate in a table index (the first is the most significant)
        self._shifts = [
            {j: len(scope) - 1 - n for n, j in enumerate(scope)} for scope in self._scopes
        ]
        self._cache: OrderedDict[tuple[int, ...], _Compiled] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._order = _variable_order(len(self.predicates), self._scopes)

    def __repr__(self) -> str:
        return (
            f"RuleCircuit(action={self.action!r}, rules={len(self.formulas)}, "
            f"predicates={len(self.predicates)})"
        )

    @property
    def state_predicates(self) -> tuple[str, ...]:
        """The candidate-step predicates other than the action."""
        return self.predicates[1:]

    # ------------------------------------------------------------------ public queries

    def p_safe(
        self,
        history: Sequence[Mapping[str, bool]],
        evidence: Mapping[str, bool | float],
        *,
        method: str = "auto",
    ) -> float:
        """``P(v_a = 1 | evidence)``: the probability that taking the action is safe.

        Parameters
        ----------
        history : sequence of mapping
            The steps before the candidate (oldest first), each mapping every predicate the
            rules mention (the action's included) to a bool.
        evidence : mapping
            Candidate-step predicate -> bool (hard) or probability in [0, 1] (soft); predicates
            left out are free. The action predicate may not appear; predicates no rule mentions
            are ignored.
        method : {"auto", "closed_form", "enumerate", "compiled"}
            ``"closed_form"`` needs hard evidence for every predicate that can move ``p_safe``;
            ``"enumerate"`` sums over at most ``max_enumerate`` free or soft predicates;
            ``"compiled"`` counts weighted models on the compiled circuit (PySDD); ``"auto"``
            takes the closed form when it applies, enumerates up to ``auto_enumerate`` free or
            soft predicates (8 when a compiled circuit for this history is cached) and uses the
            compiled circuit beyond.

        Returns
        -------
        float
            The probability in [0, 1].

        Examples
        --------
        >>> from trustlab.agents.logic import Always, Or, Pred
        >>> c = RuleCircuit("a", [(Always(Or((Pred("b"), Pred("c")))), 1.0)])
        >>> c.p_safe([{"a": True, "b": True, "c": False}], {"b": True})  # the rule ignores a
        0.5
        """
        method = check_choice(method, "method", METHODS)
        masks = self._masks(history)
        ev = self._evidence(evidence)
        return _sigmoid(self._log_odds(masks, ev, method, evidence)[0])

    def infer(
        self,
        history: Sequence[Mapping[str, bool]],
        evidence: Mapping[str, bool | float],
        *,
        method: str = "auto",
    ) -> CircuitInference:
        """:meth:`p_safe`, :meth:`violation_probabilities` and :meth:`violated` in one pass.

        The history is walked once for all three (a guardrail needs them all on every check).

        Examples
        --------
        >>> from trustlab.agents.logic import Always, Implies, Pred
        >>> c = RuleCircuit("a", [(Always(Implies(Pred("a"), Pred("b"))), 2.0)], rule_ids=["r"])
        >>> print(c.infer([], {"b": False}).summary())
        RuleCircuit('a'): p_safe = 0.119203 (closed_form, 0 free or soft predicates)
          violated: r
        """
        method = check_choice(method, "method", METHODS)
        masks = self._masks(history)
        ev = self._evidence(evidence)
        z, used, free = self._log_odds(masks, ev, method, evidence)
        probs = self._violation_probabilities(masks, ev)
        return CircuitInference(
            action=self.action,
            p_safe=_sigmoid(z),
            method=used,
            free_predicates=tuple(self.predicates[j] for j in free),
            rule_ids=self.rule_ids,
            violation_probabilities=tuple(float(v) for v in probs),
            violated=tuple(self._ranked(probs, masks)),
            log_odds=float(z),
        )

    def delta_features(
        self, history: Sequence[Mapping[str, bool]], evidence: Mapping[str, bool | float]
    ) -> np.ndarray:
        """``f_i(x, v_a=1) - f_i(x, v_a=0)`` for every rule, under hard evidence ``x``.

        These are the features of weight learning: ``p_safe = sigmoid(weights @ delta)``. Every
        predicate a rule's residual still depends on needs hard evidence (a bool, or a
        probability of exactly 0 or 1); rules settled by the history give 0.

        Examples
        --------
        >>> from trustlab.agents.logic import Always, Implies, Pred
        >>> c = RuleCircuit("a", [(Always(Implies(Pred("a"), Pred("b"))), 1.0)])
        >>> c.delta_features([], {"b": False}).tolist(), c.delta_features([], {"b": True}).tolist()
        ([-1.0], [0.0])
        """
        masks = self._masks(history)
        ev = self._evidence(evidence)
        out = np.zeros(len(self.formulas))
        hard_bits = self._hard_bits(masks, ev)
        if hard_bits is not None:
            f1, f0 = hard_bits
            return (f1 - f0).astype(np.float64)
        for i, (table, scope) in enumerate(self._reduced(masks, ev.hard)):
            rest = [j for j in scope if j != 0]
            if rest:
                names = [self.predicates[j] for j in rest]
                raise InputError.bad(
                    "evidence",
                    f"hard evidence for {names} (rule {self.rule_ids[i]!r} depends on them)",
                    {k: evidence[k] for k in names if k in evidence},
                )
            if scope:
                out[i] = float(table[1]) - float(table[0])
        return out

    def violation_probabilities(
        self, history: Sequence[Mapping[str, bool]], evidence: Mapping[str, bool | float]
    ) -> np.ndarray:
        """The probability that each rule fails if the action is taken: ``P(f_i(x, v_a=1) = 0)``.

        ``x`` follows the evidence alone, predicate by predicate independently: hard values are
        fixed, a soft predicate is true with its probability ``q``, a free one with 1/2. The rule
        weights play no part (under the circuit's own posterior every heavy rule would look
        satisfied wherever a predicate is uncertain), so this is what the evidence says about
        each rule. With hard evidence the values are 0 or 1.

        Examples
        --------
        >>> from trustlab.agents.logic import Always, Implies, Pred
        >>> c = RuleCircuit("a", [(Always(Implies(Pred("a"), Pred("b"))), 1.0)])
        >>> c.violation_probabilities([], {"b": 0.2}).tolist()
        [0.8]
        """
        masks = self._masks(history)
        ev = self._evidence(evidence)
        return self._violation_probabilities(masks, ev)

    def violated(
        self, history: Sequence[Mapping[str, bool]], evidence: Mapping[str, bool | float]
    ) -> list[int]:
        """The rules the action would violate, most important first (indices into the rules).

        A rule counts when its weight is positive and it fails if the action is taken: under
        hard evidence ``f_i(x, v_a=1) = 0``; under soft or free evidence
        :meth:`violation_probabilities` above 1/2 (a free predicate counts as true with 1/2, so a
        rule that fails exactly when one free predicate is false is not reported). A rule the
        history has already broken for good (false whatever the candidate step) is not reported:
        the action does not violate it, and it plays no part in ``p_safe``. Ranked by weight
        (descending), then by violation probability (descending), then by position.

        Examples
        --------
        >>> from trustlab.agents.logic import Always, Implies, Not, Pred
        >>> rules = [(Always(Implies(Pred("a"), Pred("b"))), 1.0),
        ...          (Always(Implies(Pred("a"), Not(Pred("c")))), 2.0)]
        >>> RuleCircuit("a", rules).violated([], {"b": False, "c": 0.9})
        [1, 0]
        """
        masks = self._masks(history)
        ev = self._evidence(evidence)
        return self._ranked(self._violation_probabilities(masks, ev), masks)

    # ------------------------------------------------------------------ inference

    def _log_odds(
        self, masks: list[int], ev: _Evidence, method: str, evidence: Mapping[str, Any]
    ) -> tuple[float, str, list[int]]:
        """``(log-odds of p_safe, method used, free predicates summed over)``."""
        if method in ("auto", "closed_form"):
            hard_bits = self._hard_bits(masks, ev)
            if hard_bits is not None:
                f1, f0 = hard_bits
                return float(self.weights @ (f1 - f0)), "closed_form", []
        if method == "compiled":
            return self._compiled(masks).log_odds(self.weights, ev), "compiled", self._nonhard(ev)
        reduced = self._reduced(masks, ev.hard)
        rules, free = _component(reduced)
        if method == "closed_form" or (method == "auto" and not free):
            if free:
                names = [self.predicates[j] for j in free]
                raise InputError.bad(
                    "evidence",
                    f"hard evidence for every predicate that matters ({names}) for 'closed_form'",
                    {k: evidence[k] for k in names if k in evidence},
                )
            return _closed_form(self.weights, reduced, rules), "closed_form", free
        if method == "enumerate" or (method == "auto" and self._auto_enumerates(masks, len(free))):
            if len(free) > self.max_enumerate:
                names = [self.predicates[j] for j in free]
                raise InputError.bad(
                    "method",
                    f"at most max_enumerate={self.max_enumerate} free or soft predicates for "
                    f"'enumerate' (use 'compiled')",
                    f"{len(free)}: {names}",
                )
            return _enumerate(self.weights, reduced, rules, free, ev.soft), "enumerate", free
        try:
            compiled = self._compiled(masks)
        except ConfigError:
            if len(free) > self.max_enumerate:
                raise
            return _enumerate(self.weights, reduced, rules, free, ev.soft), "enumerate", free
        return compiled.log_odds(self.weights, ev), "compiled", free

    def _auto_enumerates(self, masks: list[int], n_free: int) -> bool:
        """Whether ``"auto"`` enumerates ``n_free`` predicates (else it uses the compiled circuit)."""
        if n_free > self.max_enumerate:
            return False
        if n_free <= _ALWAYS_ENUMERATE:
            return True
        if n_free > self.auto_enumerate:
            return False
        with self._cache_lock:
            return tuple(masks) not in self._cache  # a compiled circuit at hand is faster

    def _nonhard(self, ev: _Evidence) -> list[int]:
        return [j for j in range(1, len(self.predicates)) if j not in ev.hard]

    def _hard_bits(self, masks: list[int], ev: _Evidence) -> tuple[np.ndarray, np.ndarray] | None:
        """``(f_i(x, 1), f_i(x, 0))`` when every rule's state predicates are hard, else None."""
        hard = ev.hard
        f1 = np.zeros(len(masks), dtype=np.int8)
        f0 = np.zeros(len(masks), dtype=np.int8)
        for i, (mask, shifts) in enumerate(zip(masks, self._shifts, strict=True)):
            index = 0
            for j, shift in shifts.items():
                if j:
                    value = hard.get(j)
                    if value is None:
                        return None
                    index |= value << shift
            f0[i] = (mask >> index) & 1
            action_shift = shifts.get(0)
            f1[i] = f0[i] if action_shift is None else (mask >> (index | 1 << action_shift)) & 1
        return f1, f0

    def _reduced(
        self, masks: list[int], hard: Mapping[int, int]
    ) -> list[tuple[np.ndarray, tuple[int, ...]]]:
        return [
            _reduce(_table(mask, len(scope)), scope, hard)
            for mask, scope in zip(masks, self._scopes, strict=True)
        ]

    def _violation_probabilities(self, masks: list[int], ev: _Evidence) -> np.ndarray:
        hard_bits = self._hard_bits(masks, ev)
        if hard_bits is not None:
            return 1.0 - hard_bits[0].astype(np.float64)
        hard = {**ev.hard, 0: 1}
        out = np.zeros(len(masks))
        for i, (table, scope) in enumerate(self._reduced(masks, hard)):
            fails = np.logical_not(table).astype(np.float64)
            for j in reversed(scope):  # contract the last axis first
                q = ev.soft.get(j, 0.5)
                fails = fails @ np.array([1.0 - q, q])
            out[i] = float(fails)
        return out

    def _ranked(self, probs: np.ndarray, masks: list[int]) -> list[int]:
        hits = [
            i
            for i in range(len(probs))
            if self.weights[i] > 0 and probs[i] > 0.5 and masks[i] != 0  # 0: broken earlier
        ]
        return sorted(hits, key=lambda i: (-self.weights[i], -probs[i], i))

    # ------------------------------------------------------------------ validation

    def _masks(self, history: Any) -> list[int]:
        """Each rule's residual on the candidate step as a bit set over its truth table."""
        if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
            raise InputError.bad("history", "a sequence of steps (predicate -> bool)", history)
        steps: list[dict[str, bool]] = []
        for t, step in enumerate(history):
            if not isinstance(step, Mapping):
                raise InputError.bad(f"history[{t}]", "a mapping predicate -> bool", step)
            values = {}
            for name in self._needed:
                try:
                    value = step[name]
                except KeyError:
                    lacking = [p for p in self._needed if p not in step]
                    raise InputError.bad(
                        f"history[{t}]",
                        f"a value for every rule predicate (missing {lacking})",
                        step,
                    ) from None
                if not isinstance(value, (bool, np.bool_)):
                    raise InputError.bad(f"history[{t}][{name!r}]", "a bool", value)
                values[name] = bool(value)
            steps.append(values)
        return [
            _run(program, steps, len(scope))
            for program, scope in zip(self._programs, self._scopes, strict=True)
        ]

    def _evidence(self, evidence: Any) -> _Evidence:
        if not isinstance(evidence, Mapping):
            raise InputError.bad("evidence", "a mapping predicate -> bool or probability", evidence)
        hard: dict[int, int] = {}
        soft: dict[int, float] = {}
        for name, value in evidence.items():
            if name == self.action:
                raise InputError.bad(
                    "evidence",
                    f"no value for the action predicate {self.action!r} (it is what is inferred)",
                    {name: value},
                )
            if isinstance(value, (bool, np.bool_)):
                q = float(value)
            elif isinstance(value, (int, float, np.integer, np.floating)):
                q = float(value)
                if not 0.0 <= q <= 1.0:  # NaN fails too
                    raise InputError.bad(
                        f"evidence[{name!r}]", "a bool or a probability in [0, 1]", value
                    )
            else:
                raise InputError.bad(
                    f"evidence[{name!r}]", "a bool or a probability in [0, 1]", value
                )
            j = self._index.get(name)
            if j is None:
                continue  # documented: evidence for predicates no rule mentions is ignored
            if q == 0.0 or q == 1.0:
                hard[j] = int(q)
            else:
                soft[j] = q
        return _Evidence(hard, soft)

    # ------------------------------------------------------------------ compiled circuits

    def _compiled(self, masks: list[int]) -> _Compiled:
        key = tuple(masks)
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        compiled = _Compiled.build(len(self.predicates), self._scopes, masks, self._order)
        with self._cache_lock:
            self._cache[key] = compiled
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return compiled


# ---------------------------------------------------------------------- residual truth tables

# Opcodes of a rule's program: one instruction per distinct subformula, children first.
_PRED, _CONST, _NOT, _AND, _OR, _IMPLIES, _NEXT, _WNEXT, _ALWAYS, _EVENTUALLY, _UNTIL, _RELEASE = (
    range(12)
)
_UNARY = {Not: _NOT, Next: _NEXT, WeakNext: _WNEXT, Always: _ALWAYS, Eventually: _EVENTUALLY}
_BINARY = {Implies: _IMPLIES, Until: _UNTIL, Release: _RELEASE}

_CANDIDATE_MASKS: dict[tuple[int, int], int] = {}


def _candidate_mask(k: int, n: int) -> int:
    """The bit set of the table rows (of 2**k) where predicate ``n`` of the scope is true."""
    key = (k, n)
    hit = _CANDIDATE_MASKS.get(key)
    if hit is None:
        rows = (np.arange(1 << k) >> (k - 1 - n)) & 1
        hit = _CANDIDATE_MASKS[key] = _to_int(rows.astype(bool))
        # keep the cache small: k <= MAX_RULE_PREDICATES, so at most 210 entries
    return hit


def _to_int(bits: np.ndarray) -> int:
    packed = np.packbits(bits.astype(np.uint8), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def _table(mask: int, k: int) -> np.ndarray:
    """The truth table of a bit set as a k-dimensional bool array (axis n: scope predicate n)."""
    size = 1 << k
    raw = np.frombuffer(mask.to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    bits = np.unpackbits(raw, bitorder="little")[:size].astype(bool)
    return bits.reshape((2,) * k)


def _program(formula: Formula, position: Mapping[str, int], k: int) -> list[tuple]:
    """The formula as straight-line instructions over bit sets (see :func:`_run`)."""
    instructions: list[tuple] = []
    done: dict[Formula, int] = {}

    def emit(instruction: tuple) -> int:
        instructions.append(instruction)
        return len(instructions) - 1

    def walk(node: Formula) -> int:
        hit = done.get(node)
        if hit is not None:
            return hit
        if isinstance(node, Pred):
            out = emit((_PRED, node.name, _candidate_mask(k, position[node.name])))
        elif isinstance(node, Const):
            out = emit((_CONST, bool(node.value)))
        elif type(node) in _UNARY:
            out = emit((_UNARY[type(node)], walk(node.arg)))
        elif isinstance(node, (And, Or)):
            op = _AND if isinstance(node, And) else _OR
            out = walk(node.args[0])
            for arg in node.args[1:]:
                out = emit((op, out, walk(arg)))
        elif type(node) in _BINARY:
            out = emit((_BINARY[type(node)], walk(node.left), walk(node.right)))
        else:
            raise InputError.bad("rules", "a trustlab.agents.logic formula", node)
        done[node] = out
        return out

    walk(formula)
    return instructions


def _run(program: list[tuple], steps: list[dict[str, bool]], k: int) -> int:
    """The rule's value at position 0 of ``steps + [candidate]`` for every candidate assignment.

    Values are bit sets over the ``2**k`` assignments of the rule's predicates at the candidate
    step: a history step's predicate is all ones or zero, the candidate's predicate the rows
    where it is true. The recurrences are those of :func:`trustlab.agents.logic.evaluate`.
    """
    full = (1 << (1 << k)) - 1
    n = len(steps) + 1
    values: list[list[int]] = []
    for ins in program:
        op = ins[0]
        if op == _PRED:
            name = ins[1]
            out = [full if step[name] else 0 for step in steps]
            out.append(ins[2])
        elif op == _CONST:
            out = [full if ins[1] else 0] * n
        elif op == _NOT:
            out = [full ^ v for v in values[ins[1]]]
        elif op == _AND:
            out = [a & b for a, b in zip(values[ins[1]], values[ins[2]], strict=True)]
        elif op == _OR:
            out = [a | b for a, b in zip(values[ins[1]], values[ins[2]], strict=True)]
        elif op == _IMPLIES:
            out = [(full ^ a) | b for a, b in zip(values[ins[1]], values[ins[2]], strict=True)]
        elif op == _NEXT:
            out = values[ins[1]][1:] + [0]
        elif op == _WNEXT:
            out = values[ins[1]][1:] + [full]
        elif op in (_ALWAYS, _EVENTUALLY):
            arg = values[ins[1]]
            out = arg.copy()
            if op == _ALWAYS:
                for i in range(n - 2, -1, -1):
                    out[i] &= out[i + 1]
            else:
                for i in range(n - 2, -1, -1):
                    out[i] |= out[i + 1]
        elif op == _UNTIL:
            left, right = values[ins[1]], values[ins[2]]
            out = right.copy()
            for i in range(n - 2, -1, -1):
                out[i] = right[i] | (left[i] & out[i + 1])
        else:  # _RELEASE
            left, right = values[ins[1]], values[ins[2]]
            out = right.copy()
            for i in range(n - 2, -1, -1):
                out[i] = right[i] & (left[i] | out[i + 1])
        values.append(out)
    return values[-1][0]


# ---------------------------------------------------------------------- exact summation


def _reduce(
    table: np.ndarray, scope: tuple[int, ...], hard: Mapping[int, int]
) -> tuple[np.ndarray, tuple[int, ...]]:
    """Substitute hard evidence and drop the predicates the table does not depend on."""
    index = tuple(hard[j] if j in hard else slice(None) for j in scope)
    table = np.asarray(table[index])
    scope = tuple(j for j in scope if j not in hard)
    n = 0
    while n < len(scope):
        lo = np.take(table, 0, axis=n)
        if np.array_equal(lo, np.take(table, 1, axis=n)):
            table = lo
            scope = scope[:n] + scope[n + 1 :]
        else:
            n += 1
    return table, scope


def _component(reduced: list[tuple[np.ndarray, tuple[int, ...]]]) -> tuple[list[int], list[int]]:
    """The rules connected to the action (index 0) and the other predicates among them.

    Rules outside the action's connected component multiply both ``v_a = 1`` and ``v_a = 0`` by
    the same factor, so they cancel from ``p_safe``.
    """
    by_var: dict[int, list[int]] = {}
    for i, (_, scope) in enumerate(reduced):
        for j in scope:
            by_var.setdefault(j, []).append(i)
    seen_vars = {0}
    seen_rules: set[int] = set()
    stack = [0]
    while stack:
        j = stack.pop()
        for i in by_var.get(j, ()):
            if i in seen_rules:
                continue
            seen_rules.add(i)
            for v in reduced[i][1]:
                if v not in seen_vars:
                    seen_vars.add(v)
                    stack.append(v)
    return sorted(seen_rules), sorted(seen_vars - {0})


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _closed_form(
    weights: np.ndarray, reduced: list[tuple[np.ndarray, tuple[int, ...]]], rules: list[int]
) -> float:
    z = 0.0
    for i in rules:
        table, _ = reduced[i]  # depends on the action alone
        z += weights[i] * (float(table[1]) - float(table[0]))
    return z


def _logsumexp(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.sum(np.exp(x - m))))


def _enumerate(
    weights: np.ndarray,
    reduced: list[tuple[np.ndarray, tuple[int, ...]]],
    rules: list[int],
    free: list[int],
    soft: Mapping[int, float],
) -> float:
    """Exact log-odds of ``p_safe`` by summing over all ``2**F`` assignments of the ``free``
    predicates."""
    size = 1 << len(free)
    worlds = np.arange(size, dtype=np.int32)
    position = {j: n for n, j in enumerate(free)}  # bit n of the world number
    bit_cache: dict[int, np.ndarray] = {}

    def bit(j: int) -> np.ndarray:
        got = bit_cache.get(j)
        if got is None:
            got = bit_cache[j] = (worlds >> position[j]) & 1
        return got

    score1 = np.zeros(size)
    for j in free:
        q = soft.get(j)
        if q is not None:
            score1 += np.where(bit(j) == 1, math.log(q), math.log1p(-q))
    score0 = score1.copy()
    for i in rules:
        w = weights[i]
        if w == 0.0:
            continue
        table, scope = reduced[i]
        flat = table.reshape(-1)
        k = len(scope)
        index = np.zeros(size, dtype=np.int32)
        action_stride = 0
        for n, j in enumerate(scope):
            stride = 1 << (k - 1 - n)
            if j == 0:
                action_stride = stride
            else:
                index += bit(j) * np.int32(stride)
        holds0 = flat[index]
        score0 += w * holds0
        score1 += w * (flat[index + np.int32(action_stride)] if action_stride else holds0)
    return _logsumexp(score1) - _logsumexp(score0)


# ---------------------------------------------------------------------- compiled circuits


def _variable_order(n_predicates: int, scopes: Sequence[tuple[int, ...]]) -> list[int]:
    """A vtree variable order (1-based SDD variables) keeping each rule next to its predicates.

    Predicate ``j`` is SDD variable ``j + 1`` and rule ``i``'s indicator ``r_i`` is variable
    ``n_predicates + i + 1``; rules come in order of their first predicate, each indicator right
    after its predicates that were not placed yet.
    """
    order: list[int] = []
    placed: set[int] = set()
    ranked = sorted(range(len(scopes)), key=lambda i: (min(scopes[i], default=-1), i))
    for i in ranked:
        for j in scopes[i]:
            if j not in placed:
                placed.add(j)
                order.append(j + 1)
        order.append(n_predicates + i + 1)
    order.extend(j + 1 for j in range(n_predicates) if j not in placed)
    return order


class _Compiled:
    """One compiled rule circuit (PySDD): the manager, its root and a log-space WMC manager."""

    def __init__(self, manager: Any, root: Any, n_predicates: int, n_rules: int) -> None:
        self.manager = manager
        self.root = root
        self.n_predicates = n_predicates
        self.n_vars = n_predicates + n_rules
        self.wmc = root.wmc(log_mode=True)
        self.lock = threading.Lock()

    @classmethod
    def build(
        cls,
        n_predicates: int,
        scopes: Sequence[tuple[int, ...]],
        masks: Sequence[int],
        order: list[int],
    ) -> _Compiled:
        sdd = require("pysdd.sdd", "agents")
        n_vars = n_predicates + len(scopes)
        vtree = sdd.Vtree(var_count=n_vars, var_order=order, vtree_type="balanced")
        manager = sdd.SddManager.from_vtree(vtree)
        rank = {v: n for n, v in enumerate(order)}
        root = manager.true()
        for i, (scope, mask) in enumerate(zip(scopes, masks, strict=True)):
            # axes in vtree order, then Shannon expansion (an ordered decision diagram) into SDD
            table = _table(mask, len(scope))
            perm = sorted(range(len(scope)), key=lambda n: rank[scope[n] + 1])
            table = np.transpose(table, perm)
            lits = [manager.literal(scope[n] + 1) for n in perm]
            phi = _shannon(manager, table, lits, 0, {})
            r = manager.literal(n_predicates + i + 1)
            root = root & ((~r | phi) & (r | ~phi))
        return cls(manager, root, n_predicates, len(scopes))

    def log_odds(self, rule_weights: np.ndarray, ev: _Evidence) -> float:
        """``log P(v_a = 1, evidence) - log P(v_a = 0, evidence)`` by weighted model counting."""
        n = self.n_vars
        weights = np.zeros(2 * n)  # log weights of the literals -n..-1, 1..n

        for j, value in ev.hard.items():
            v = j + 1
            weights[n - v if value else n + v - 1] = -math.inf
        for j, q in ev.soft.items():
            v = j + 1
            weights[n + v - 1] = math.log(q)
            weights[n - v] = math.log1p(-q)
        weights[n + self.n_predicates :] = rule_weights
        action_pos, action_neg = n, n - 1  # the literals of SDD variable 1
        with self.lock:
            weights[action_neg] = -math.inf
            self.wmc.set_literal_weights_from_array(weights)
            log1 = self.wmc.propagate()
            weights[action_neg] = 0.0
            weights[action_pos] = -math.inf
            self.wmc.set_literal_weights_from_array(weights)
            log0 = self.wmc.propagate()
        return log1 - log0


def _shannon(manager: Any, table: np.ndarray, lits: list[Any], depth: int, memo: dict) -> Any:
    """The SDD of a truth table whose axes follow ``lits`` (from ``depth`` on)."""
    if table.all():
        return manager.true()
    if not table.any():
        return manager.false()
    key = (depth, table.tobytes())
    hit = memo.get(key)
    if hit is not None:
        return hit
    lo = _shannon(manager, table[0], lits, depth + 1, memo)
    hi = _shannon(manager, table[1], lits, depth + 1, memo)
    lit = lits[depth]
    node = (lit & hi) | (~lit & lo)
    memo[key] = node
    return node
