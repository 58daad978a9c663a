"""Rule-circuit inference (check B1): exact p_safe against brute force and pgmpy, and its laws."""

from __future__ import annotations

import doctest
import itertools
import math
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import trustlab.agents.circuit as circuit_module
from trustlab.agents.circuit import CircuitInference, RuleCircuit, decide
from trustlab.agents.logic import (
    FALSE,
    TRUE,
    Always,
    And,
    Const,
    Eventually,
    Implies,
    Next,
    Not,
    Or,
    Pred,
    Release,
    Until,
    WeakNext,
    evaluate,
)
from trustlab.errors import ConfigError, InputError

HAS_PYSDD = True
try:
    import pysdd.sdd  # noqa: F401
except ImportError:  # pragma: no cover - the agents extra is missing
    HAS_PYSDD = False
needs_pysdd = pytest.mark.skipif(not HAS_PYSDD, reason="pysdd (trustlab[agents]) is not installed")
EXACT_METHODS = ["enumerate", pytest.param("compiled", marks=needs_pysdd)]
TOL = 1e-9

# ---------------------------------------------------------------------------- oracles


def holds(formula, world):
    """Plain propositional truth of ``formula`` in ``world`` (a dict name -> bool)."""
    if isinstance(formula, Const):
        return formula.value
    if isinstance(formula, Pred):
        return world[formula.name]
    if isinstance(formula, Not):
        return not holds(formula.arg, world)
    if isinstance(formula, And):
        return all(holds(a, world) for a in formula.args)
    if isinstance(formula, Or):
        return any(holds(a, world) for a in formula.args)
    if isinstance(formula, Implies):
        return (not holds(formula.left, world)) or holds(formula.right, world)
    raise TypeError(formula)


def brute_p_safe(action, rules, history, evidence):
    """P(action | evidence) summed world by world (itertools.product, math.exp).

    Propositional rules on an empty history are judged with :func:`holds`; otherwise with the
    scalar LTLf evaluator on the whole trace.
    """
    names = sorted(set().union(*(f.predicates for f, _ in rules)) - {action})
    fixed = {p: evidence[p] for p in names if isinstance(evidence.get(p), bool)}
    summed = [p for p in names if p not in fixed]
    propositional = not history and not any(f.temporal for f, _ in rules)
    total = {True: 0.0, False: 0.0}
    for values in itertools.product([False, True], repeat=len(summed)):
        world = dict(fixed)
        world.update(zip(summed, values, strict=True))
        unit = 1.0
        for p in summed:
            q = evidence.get(p)
            if q is not None:
                unit *= q if world[p] else 1.0 - q
        for a in (False, True):
            world[action] = a
            score = 0.0
            for formula, w in rules:
                ok = (
                    holds(formula, world) if propositional else evaluate(formula, [*history, world])
                )
                score += w * ok
            total[a] += unit * math.exp(score)
    return total[True] / (total[True] + total[False])


def brute_violation_probabilities(action, rules, history, evidence):
    """P(rule fails | action taken), predicates independent: hard fixed, soft q, free 1/2."""
    out = []
    for formula, _ in rules:
        names = sorted(formula.predicates - {action})
        p_fail = 0.0
        for values in itertools.product([False, True], repeat=len(names)):
            world = dict(zip(names, values, strict=True))
            prob = 1.0
            for p, v in world.items():
                e = evidence.get(p, 0.5)
                q = float(e)
                prob *= q if v else 1.0 - q
            world[action] = True
            if not evaluate(formula, [*history, world]):
                p_fail += prob
        out.append(p_fail)
    return out


def broken_for_good(action, formula, history):
    """Whether the history makes ``formula`` false whatever the candidate step."""
    names = sorted(formula.predicates | {action})
    return not any(
        evaluate(formula, [*history, dict(zip(names, values, strict=True))])
        for values in itertools.product([False, True], repeat=len(names))
    )


def pgmpy_p_safe(action, rules, evidence):
    """P(action | evidence) by pgmpy's variable elimination on the Markov network.

    One factor exp(w_i f_i) over each rule's predicates, a unit factor (1 - q, q) per soft
    predicate, hard evidence as evidence.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.factors.discrete import DiscreteFactor
        from pgmpy.inference import VariableElimination
        from pgmpy.models import DiscreteMarkovNetwork

    names = sorted(set().union(*(f.predicates for f, _ in rules)) | {action})
    model = DiscreteMarkovNetwork()
    model.add_nodes_from(names)
    factors = [DiscreteFactor([p], [2], [1.0, 1.0]) for p in names]
    for formula, w in rules:
        scope = sorted(formula.predicates)
        if not scope:
            continue
        values = [
            math.exp(w * holds(formula, dict(zip(scope, bits, strict=True))))
            for bits in itertools.product([False, True], repeat=len(scope))
        ]
        factors.append(DiscreteFactor(scope, [2] * len(scope), values))
        model.add_edges_from(itertools.combinations(scope, 2))
    hard = {}
    for p, e in evidence.items():
        if p not in names:
            continue
        if isinstance(e, bool):
            hard[p] = int(e)
        else:
            factors.append(DiscreteFactor([p], [2], [1.0 - e, e]))
    model.add_factors(*factors)
    result = VariableElimination(model).query([action], evidence=hard, show_progress=False)
    values = np.asarray(result.values, dtype=float)
    return float(values[1] / values.sum())


# ---------------------------------------------------------------------------- random circuits


def random_formula(rng, names, depth, temporal=False):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.04:
            return TRUE if rng.random() < 0.5 else FALSE
        return Pred(names[rng.integers(len(names))])
    kinds = ["not", "and", "or", "implies"]
    if temporal:
        kinds += ["always", "eventually", "until", "release", "next", "weak_next"]
    kind = kinds[rng.integers(len(kinds))]

    def sub():
        return random_formula(rng, names, depth - 1, temporal)

    if kind == "not":
        return Not(sub())
    if kind in ("and", "or"):
        args = tuple(sub() for _ in range(rng.integers(2, 4)))
        return And(args) if kind == "and" else Or(args)
    if kind == "implies":
        return Implies(sub(), sub())
    unary = {"always": Always, "eventually": Eventually, "next": Next, "weak_next": WeakNext}
    if kind in unary:
        return unary[kind](sub())
    return (Until if kind == "until" else Release)(sub(), sub())


def random_evidence(rng, names, hard=0.3, soft=0.35):
    evidence = {}
    for p in names:
        u = rng.random()
        if u < hard:
            evidence[p] = bool(rng.random() < 0.5)
        elif u < hard + soft:
            evidence[p] = float(rng.uniform(0.02, 0.98))
    return evidence


def random_circuit(seed, temporal=False):
    """(action, rules, evidence, history): <= 12 predicates with the action, 1..8 rules."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 13))
    names = ["act"] + [f"p{i}" for i in range(n - 1)]
    while True:
        rules = [
            (random_formula(rng, names, 3, temporal), float(rng.uniform(-3, 3)))
            for _ in range(rng.integers(1, 9))
        ]
        if any("act" in f.predicates for f, _ in rules):
            break
    history = []
    if temporal:
        history = [{p: bool(rng.random() < 0.5) for p in names} for _ in range(rng.integers(0, 5))]
    return "act", rules, random_evidence(rng, names[1:]), history


B1_SEEDS = range(200)


def _pgmpy_b1(seeds):
    """pgmpy's answers for the B1 circuits (run in the background worker when one is up)."""
    out = []
    for seed in seeds:
        action, rules, evidence, _ = random_circuit(seed)
        out.append(pgmpy_p_safe(action, rules, evidence))
    return out


BACKGROUND_JOBS = {"circuit-b1-pgmpy": (_pgmpy_b1, {"seeds": list(B1_SEEDS)})}


@pytest.fixture(scope="module")
def b1_cases():
    return [random_circuit(seed) for seed in B1_SEEDS]


@pytest.fixture(scope="module")
def b1_brute(b1_cases):
    return [brute_p_safe(a, rules, [], ev) for a, rules, ev, _ in b1_cases]


# ---------------------------------------------------------------------------- B1


@pytest.mark.parametrize("method", EXACT_METHODS + ["auto"])
def test_b1_p_safe_equals_brute_force(b1_cases, b1_brute, method):
    worst = 0.0
    for (action, rules, evidence, _), expected in zip(b1_cases, b1_brute, strict=True):
        got = RuleCircuit(action, rules).p_safe([], evidence, method=method)
        worst = max(worst, abs(got - expected))
    assert worst <= TOL


def test_b1_p_safe_equals_pgmpy_variable_elimination(b1_cases, b1_brute, background):
    pytest.importorskip("pgmpy")
    reference = background.result("circuit-b1-pgmpy", BACKGROUND_JOBS["circuit-b1-pgmpy"])
    assert len(reference) == len(b1_cases)
    # the two oracles agree with each other ...
    assert max(abs(a - b) for a, b in zip(reference, b1_brute, strict=True)) <= TOL
    methods = ["enumerate"] + (["compiled"] if HAS_PYSDD else [])
    for method in methods:
        got = [RuleCircuit(a, r).p_safe([], ev, method=method) for a, r, ev, _ in b1_cases]
        # ... and trustlab agrees with pgmpy
        assert max(abs(g - p) for g, p in zip(got, reference, strict=True)) <= TOL, method
    # the cases are not degenerate: probabilities spread over (0, 1), evidence of every kind
    assert np.ptp(reference) > 0.8
    kinds = {type(v) for _, _, ev, _ in b1_cases for v in ev.values()}
    assert kinds == {bool, float}


@pytest.fixture(scope="module")
def temporal_cases():
    cases = [random_circuit(seed, temporal=True) for seed in range(1000, 1080)]
    return [(case, brute_p_safe(case[0], case[1], case[3], case[2])) for case in cases]


@pytest.mark.parametrize("method", EXACT_METHODS)
def test_temporal_rules_with_history_equal_brute_force(temporal_cases, method):
    worst = 0.0
    for (action, rules, evidence, history), expected in temporal_cases:
        got = RuleCircuit(action, rules).p_safe(history, evidence, method=method)
        worst = max(worst, abs(got - expected))
    assert worst <= TOL
    assert sum(bool(h) for (_, _, _, h), _ in temporal_cases) > 50  # most have a history


def test_violation_probabilities_equal_brute_force():
    for seed in range(2000, 2060):
        action, rules, evidence, history = random_circuit(seed, temporal=True)
        circuit = RuleCircuit(action, rules)
        got = circuit.violation_probabilities(history, evidence)
        expected = brute_violation_probabilities(action, rules, history, evidence)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        ranked = circuit.violated(history, evidence)
        weights = circuit.weights
        broken = [broken_for_good(action, f, history) for f, _ in rules]
        assert set(ranked) == {
            i for i, p in enumerate(expected) if weights[i] > 0 and p > 0.5 and not broken[i]
        }
        assert [weights[i] for i in ranked] == sorted((weights[i] for i in ranked), reverse=True)


def test_residual_tables_match_the_ltlf_evaluator_on_every_candidate():
    """The history walk on bit sets equals logic.evaluate on history + candidate, world by world."""
    for seed in range(3000, 3300):
        rng = np.random.default_rng(seed)
        names = ["act", "p0", "p1", "p2"]
        formula = random_formula(rng, names, int(rng.integers(2, 5)), temporal=True)
        history = [{p: bool(rng.random() < 0.5) for p in names} for _ in range(rng.integers(0, 6))]
        circuit = RuleCircuit("act", [(formula, 1.0)])
        others = sorted(formula.predicates - {"act"})
        for values in itertools.product([False, True], repeat=len(others)):
            x = dict(zip(others, values, strict=True))
            f1 = evaluate(formula, [*history, {**x, "act": True}])
            f0 = evaluate(formula, [*history, {**x, "act": False}])
            assert circuit.delta_features(history, x)[0] == int(f1) - int(f0)
            assert circuit.violation_probabilities(history, x)[0] == (0.0 if f1 else 1.0)


# ---------------------------------------------------------------------------- larger circuits


def chain_circuit(n_state, n_rules, seed):
    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(n_state)]
    rules = []
    for i in range(n_rules):
        b, c = rng.choice(n_state, size=2, replace=False)
        body = And((Pred("act"), Pred(names[b]))) if i % 2 else Pred(names[b])
        rules.append(
            (
                Always(Implies(body, Or((Pred(names[c]), Not(Pred(names[i % n_state])))))),
                float(rng.uniform(-3, 3)),
            )
        )
    return names, rules


@needs_pysdd
def test_compiled_equals_enumeration_with_many_free_predicates():
    names, rules = chain_circuit(17, 22, seed=5)
    circuit = RuleCircuit("act", rules)
    rng = np.random.default_rng(6)
    history = [{p: bool(rng.random() < 0.5) for p in ["act", *names]} for _ in range(3)]
    for step in history:
        step["act"] = False
    evidence = {p: float(rng.uniform(0.05, 0.95)) for p in names[::2]}
    enumerated = circuit.infer(history, evidence, method="enumerate")
    compiled = circuit.infer(history, evidence, method="compiled")
    assert len(enumerated.free_predicates) >= 14
    assert abs(enumerated.p_safe - compiled.p_safe) <= TOL
    assert circuit.infer(history, evidence).method == "compiled"  # auto: compiled one is cached


@needs_pysdd
def test_auto_switches_by_size_and_by_the_cache():
    def soft(names):
        return {p: 0.3 for p in names}

    names, rules = chain_circuit(18, 22, seed=8)
    big = RuleCircuit("act", rules)
    result = big.infer([], soft(names))
    assert len(result.free_predicates) > 16 and result.method == "compiled"
    names, rules = chain_circuit(11, 14, seed=8)
    mid = RuleCircuit("act", rules)
    first = mid.infer([], soft(names))
    assert 8 < len(first.free_predicates) <= 16 and first.method == "enumerate"
    mid.p_safe([], soft(names), method="compiled")  # now cached for this history
    again = mid.infer([], soft(names))
    assert again.method == "compiled" and abs(again.p_safe - first.p_safe) <= TOL
    names, rules = chain_circuit(6, 8, seed=8)
    small = RuleCircuit("act", rules)
    small.p_safe([], soft(names), method="compiled")
    assert small.infer([], soft(names)).method == "enumerate"  # <= 8: always enumerated


def test_large_weights_stay_exact_in_log_space():
    """25 rules of weight up to 80: exp(sum) overflows floats, not the log-space sums."""
    getcontext().prec = 60
    names = [f"x{i}" for i in range(6)]
    rules = [
        (Always(Implies(Pred("act"), Or((Pred(names[i % 6]), Pred(names[(i + 1) % 6]))))), 80.0 - i)
        for i in range(25)
    ]
    evidence = {"x0": 0.3, "x1": 0.9, "x2": True, "x3": 0.6}
    circuit = RuleCircuit("act", rules)
    total = {True: Decimal(0), False: Decimal(0)}
    free = ["x0", "x1", "x3", "x4", "x5"]
    for values in itertools.product([False, True], repeat=len(free)):
        world = dict(zip(free, values, strict=True))
        world["x2"] = True
        unit = Decimal(1)
        for p in ("x0", "x1", "x3"):
            q = Decimal(repr(evidence[p]))
            unit *= q if world[p] else 1 - q
        for a in (False, True):
            world["act"] = a
            score = sum(Decimal(repr(w)) * holds(f.arg, world) for f, w in rules)
            total[a] += unit * score.exp()
    expected = float(total[True] / (total[True] + total[False]))
    assert 1e-6 < expected < 1 - 1e-6
    for method in ["enumerate"] + (["compiled"] if HAS_PYSDD else []):
        assert abs(circuit.p_safe([], evidence, method=method) - expected) <= 1e-12


# ---------------------------------------------------------------------------- laws (hypothesis)

NAMES = ["act", "a", "b", "c", "d"]
atoms = st.sampled_from([Pred(n) for n in NAMES])
formulas = st.recursive(
    atoms,
    lambda kids: st.one_of(
        st.builds(Not, kids),
        st.builds(lambda xs: And(tuple(xs)), st.lists(kids, min_size=2, max_size=3)),
        st.builds(lambda xs: Or(tuple(xs)), st.lists(kids, min_size=2, max_size=3)),
        st.builds(Implies, kids, kids),
        st.builds(Always, kids),
    ),
    max_leaves=6,
)
weights = st.floats(-3, 3, allow_nan=False)
rule_lists = st.lists(st.tuples(formulas, weights), min_size=1, max_size=5)
hard_values = st.fixed_dictionaries({n: st.booleans() for n in NAMES[1:]})
mixed_values = st.dictionaries(
    st.sampled_from(NAMES[1:]), st.one_of(st.booleans(), st.floats(0.01, 0.99))
)


def _methods():
    return ["enumerate"] + (["compiled"] if HAS_PYSDD else [])


@settings(max_examples=60, deadline=None)
@given(rule_lists, hard_values)
def test_closed_form_equals_enumeration_with_hard_evidence(rules, evidence):
    circuit = RuleCircuit("act", rules)
    closed = circuit.p_safe([], evidence, method="closed_form")
    for method in _methods():
        assert abs(circuit.p_safe([], evidence, method=method) - closed) <= 1e-12
    delta = circuit.delta_features([], evidence)
    z = float(np.dot(circuit.weights, delta))
    assert abs(closed - 1.0 / (1.0 + math.exp(-z))) <= 1e-15


@settings(max_examples=60, deadline=None)
@given(rule_lists, formulas, mixed_values)
def test_a_rule_of_weight_zero_changes_nothing(rules, extra, evidence):
    base = RuleCircuit("act", rules)
    more = RuleCircuit("act", [*rules, (extra, 0.0)])
    for method in _methods():
        before = base.p_safe([], evidence, method=method)
        assert abs(more.p_safe([], evidence, method=method) - before) <= 1e-12


fresh_formulas = st.recursive(
    st.sampled_from([Pred("u"), Pred("v")]),
    lambda kids: st.one_of(st.builds(Not, kids), st.builds(Implies, kids, kids)),
    max_leaves=4,
)


@settings(max_examples=60, deadline=None)
@given(
    rule_lists,
    st.lists(st.tuples(fresh_formulas, weights), min_size=1, max_size=3),
    mixed_values,
    st.floats(0.01, 0.99),
)
def test_rules_that_do_not_reach_the_action_change_nothing(rules, unrelated, evidence, q):
    """Rules over predicates the action's rules never mention cancel, whatever their weights."""
    base = RuleCircuit("act", rules)
    more = RuleCircuit("act", [*rules, *unrelated])
    evidence = {**evidence, "u": q}
    for method in _methods():
        before = base.p_safe([], evidence, method=method)
        assert abs(more.p_safe([], evidence, method=method) - before) <= 1e-12


@settings(max_examples=60, deadline=None)
@given(rule_lists, st.lists(st.tuples(formulas, weights), min_size=1, max_size=3), hard_values)
def test_with_hard_evidence_rules_without_the_action_change_nothing(rules, extra, evidence):
    extra = [(f, w) for f, w in extra if "act" not in f.predicates]
    base = RuleCircuit("act", rules)
    more = RuleCircuit("act", [*rules, *extra])
    assert abs(more.p_safe([], evidence) - base.p_safe([], evidence)) <= 1e-15


def test_a_rule_without_the_action_does_matter_through_a_shared_free_predicate():
    """Invariance needs the extra rule to be cut off from the action: here it is not."""
    rules = [(Implies(Pred("act"), Pred("b")), 2.0)]
    base = RuleCircuit("act", rules)
    more = RuleCircuit("act", [*rules, (Pred("b"), 3.0)])
    # b free: the second rule makes b likely, so acting (which needs b) looks safer
    assert more.p_safe([], {}) > base.p_safe([], {}) + 0.1
    assert more.p_safe([], {"b": True}) == base.p_safe([], {"b": True})


@settings(max_examples=60, deadline=None)
@given(rule_lists, mixed_values, weights)
def test_a_rule_already_violated_in_the_history_contributes_nothing(rules, evidence, weight):
    history = [{"act": True, "a": True, "b": False, "c": False, "d": False}]
    broken = Always(Implies(Pred("a"), Pred("b")))  # fails at step 0 whatever comes next
    base = RuleCircuit("act", rules)
    more = RuleCircuit("act", [*rules, (broken, weight)])
    for method in _methods():
        before = base.p_safe(history, evidence, method=method)
        assert abs(more.p_safe(history, evidence, method=method) - before) <= 1e-12
    assert more.delta_features(history, {n: True for n in NAMES[1:]})[-1] == 0.0
    assert len(rules) not in more.violated(history, evidence)
    assert more.violation_probabilities(history, evidence)[-1] == 1.0


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 3.0), st.floats(0.01, 0.98), st.floats(0.001, 0.01))
@example(2.220446049250313e-16, 0.361328125, 0.0078125)  # found by hypothesis in a full run
def test_p_safe_grows_with_the_probability_of_the_rule_s_condition(weight, q, dq):
    rules = [(Always(Implies(Pred("act"), Pred("ok"))), weight)]
    circuit = RuleCircuit("act", rules)
    low, high = circuit.p_safe([], {"ok": q}), circuit.p_safe([], {"ok": q + dq})
    # Grows, up to rounding: with a weight near 0 (hypothesis found 2.2e-16) the true gain,
    # about weight * dq / 4, is far below one ulp of values near 1/2, and the two rounded values
    # came out one ulp the wrong way (0.49999999999999994 < 0.5).
    assert high - low >= -4e-16
    assert high > low or weight < 1e-9
    e = math.exp(weight)
    assert abs(low - (q * e + 1 - q) / (q * e + 1 - q + e)) <= 1e-12


# ---------------------------------------------------------------------------- closed form, features


def test_closed_form_and_delta_features_by_hand():
    rules = [
        (Always(Implies(Pred("pay"), Pred("known"))), 3.0),
        (Always(Implies(Pred("pay"), Not(Pred("over")))), 1.5),
        (Implies(Pred("asked"), Pred("pay")), 0.7),  # rewards paying when asked (step 0 only)
    ]
    circuit = RuleCircuit("pay", rules, rule_ids=["known", "limit", "asked"])
    x = {"known": False, "over": True, "asked": True}
    np.testing.assert_array_equal(circuit.delta_features([], x), [-1.0, -1.0, 1.0])
    expected = 1.0 / (1.0 + math.exp(3.0 + 1.5 - 0.7))
    assert circuit.p_safe([], x) == pytest.approx(expected, abs=1e-15)
    assert circuit.violated([], x) == [0, 1]
    assert circuit.infer([], x).violated_ids == ["known", "limit"]
    # with a history, the propositional rule judges step 0, not the candidate: it is settled
    step = {"pay": False, "known": True, "over": False, "asked": True}
    np.testing.assert_array_equal(circuit.delta_features([step], x), [-1.0, -1.0, 0.0])


def test_delta_features_ignore_predicates_of_settled_rules():
    rule = Always(Implies(Pred("act"), Pred("b")))
    history = [{"act": True, "b": False}]
    circuit = RuleCircuit("act", [(rule, 2.0)])
    assert circuit.delta_features(history, {}).tolist() == [0.0]
    assert circuit.p_safe(history, {}, method="closed_form") == 0.5


def test_a_circuit_that_never_mentions_the_action_is_neutral():
    circuit = RuleCircuit("act", [(Or((Pred("a"), Pred("b"))), 2.0)])
    assert circuit.p_safe([], {"a": 0.3}) == 0.5
    assert circuit.infer([], {"a": 0.3}).free_predicates == ()
    assert RuleCircuit("act", []).p_safe([], {}) == 0.5


def test_infer_matches_the_separate_queries():
    action, rules, evidence, history = random_circuit(7, temporal=True)
    circuit = RuleCircuit(action, rules)
    result = circuit.infer(history, evidence)
    assert isinstance(result, CircuitInference)
    assert result.p_safe == circuit.p_safe(history, evidence)
    assert list(result.violated) == circuit.violated(history, evidence)
    np.testing.assert_array_equal(
        result.violation_probabilities, circuit.violation_probabilities(history, evidence)
    )
    data = result.to_dict()
    assert data["p_safe"] == result.p_safe and data["violated_ids"] == result.violated_ids
    assert "p_safe" in result.summary()


def test_soft_evidence_of_exactly_zero_or_one_is_hard():
    rules = [(Always(Implies(Pred("act"), Pred("b"))), 2.0)]
    circuit = RuleCircuit("act", rules)
    assert circuit.infer([], {"b": 1.0}).method == "closed_form"
    assert circuit.p_safe([], {"b": 0.0}) == circuit.p_safe([], {"b": False})
    assert circuit.p_safe([], {"b": np.float64(1)}) == circuit.p_safe([], {"b": True})


def test_unknown_evidence_predicates_are_ignored_but_still_validated():
    circuit = RuleCircuit("act", [(Always(Implies(Pred("act"), Pred("b"))), 2.0)])
    assert circuit.p_safe([], {"b": True, "elsewhere": 0.4}) == circuit.p_safe([], {"b": True})
    with pytest.raises(InputError, match="elsewhere"):
        circuit.p_safe([], {"b": True, "elsewhere": 1.5})


# ---------------------------------------------------------------------------- compiled circuits


@needs_pysdd
def test_one_compilation_serves_every_hard_evidence_and_history_with_the_same_residuals():
    names, rules = chain_circuit(8, 10, seed=1)
    rules.append((Always(Implies(Pred("act"), Pred("x0"))), 1.0))
    circuit = RuleCircuit("act", rules)
    rng = np.random.default_rng(2)
    clean = [{p: False for p in ["act", *names]}]
    for _ in range(5):
        evidence = random_evidence(rng, names, hard=0.5, soft=0.3)
        assert (
            abs(
                circuit.p_safe(clean, evidence, method="compiled")
                - circuit.p_safe(clean, evidence, method="enumerate")
            )
            <= TOL
        )
    assert len(circuit._cache) == 1
    # a history that breaks the last rule changes its residual: a second compilation
    broken = [{**clean[0], "act": True, "x0": False}]
    circuit.p_safe(broken, {}, method="compiled")
    assert len(circuit._cache) == 2


@needs_pysdd
def test_compiled_queries_are_thread_safe():
    names, rules = chain_circuit(10, 12, seed=3)
    circuit = RuleCircuit("act", rules)
    rng = np.random.default_rng(4)
    queries = [random_evidence(rng, names) for _ in range(40)]
    serial = [circuit.p_safe([], ev, method="compiled") for ev in queries]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda ev: circuit.p_safe([], ev, method="compiled"), queries))
    assert parallel == serial


def test_without_pysdd_compiled_raises_config_error_and_auto_enumerates(monkeypatch):
    monkeypatch.setitem(sys.modules, "pysdd.sdd", None)
    monkeypatch.setitem(sys.modules, "pysdd", None)
    names, rules = chain_circuit(4, 5, seed=0)
    circuit = RuleCircuit("act", rules, auto_enumerate=1)
    with pytest.raises(ConfigError, match=r"trustlab\[agents\]"):
        circuit.p_safe([], {}, method="compiled")
    expected = brute_p_safe("act", rules, [], {})
    result = circuit.infer([], {})
    assert result.method == "enumerate" and abs(result.p_safe - expected) <= TOL
    small = RuleCircuit("act", rules, auto_enumerate=1, max_enumerate=2)
    with pytest.raises(ConfigError):
        small.p_safe([], {})


# ---------------------------------------------------------------------------- decide


def test_decide_threshold():
    assert decide(0.5) and not decide(0.4999)
    assert decide(0.75, 0.5) and not decide(0.7499, 0.5)
    assert decide(0.6, 0.2)  # 0.6 - 0.4 rounds below 0.2 in floats; the rule is p >= 0.6
    assert decide(0.5 - 1e-13)  # rounding of an exact tie still allows
    assert decide(1.0, 0.999) and not decide(0.0)


@pytest.mark.parametrize(
    ("p", "eps", "name"),
    [
        (0.5, 1.0, "epsilon"),
        (0.5, -1.0, "epsilon"),
        (0.5, float("nan"), "epsilon"),
        (1.5, 0.0, "p_safe"),
    ],
)
def test_decide_rejects_bad_arguments(p, eps, name):
    with pytest.raises(InputError, match=name):
        decide(p, eps)


# ---------------------------------------------------------------------------- bad inputs

RULE = Always(Implies(Pred("act"), Pred("b")))


def test_bad_probability_names_the_predicate():
    circuit = RuleCircuit("act", [(RULE, 1.0)])
    with pytest.raises(InputError, match=r"evidence\['b'\].*probability in \[0, 1\].*1\.5"):
        circuit.p_safe([], {"b": 1.5})
    with pytest.raises(InputError, match=r"evidence\['b'\]"):
        circuit.p_safe([], {"b": float("nan")})
    with pytest.raises(InputError, match=r"evidence\['b'\]"):
        circuit.p_safe([], {"b": "yes"})


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), "2", True])
def test_bad_weight_is_named(weight):
    with pytest.raises(InputError, match=r"rules\[1\] weight.*finite number"):
        RuleCircuit("act", [(RULE, 1.0), (RULE, weight)])


def test_action_in_evidence_is_rejected():
    circuit = RuleCircuit("act", [(RULE, 1.0)])
    with pytest.raises(InputError, match="action predicate 'act'"):
        circuit.p_safe([], {"act": True, "b": True})


def test_missing_history_value_is_named():
    circuit = RuleCircuit("act", [(RULE, 1.0)])
    with pytest.raises(InputError, match=r"history\[1\].*missing \['b'\]"):
        circuit.p_safe([{"act": False, "b": True}, {"act": False}], {"b": True})
    with pytest.raises(InputError, match=r"history\[0\]\['b'\].*a bool"):
        circuit.p_safe([{"act": False, "b": 0.7}], {"b": True})
    with pytest.raises(InputError, match="history"):
        circuit.p_safe({"act": False, "b": True}, {"b": True})


def test_method_limits_are_enforced():
    names, rules = chain_circuit(6, 8, seed=9)
    circuit = RuleCircuit("act", rules, max_enumerate=3)
    with pytest.raises(InputError, match="max_enumerate=3"):
        circuit.p_safe([], {}, method="enumerate")
    with pytest.raises(InputError, match="closed_form"):
        circuit.p_safe([], {}, method="closed_form")
    with pytest.raises(InputError, match="method"):
        circuit.p_safe([], {}, method="fast")
    with pytest.raises(InputError, match="hard evidence"):
        circuit.delta_features([], {})


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"action": ""}, "action"),
        ({"rules": "ALWAYS a"}, "rules"),
        ({"rules": [("a", 1.0)]}, r"rules\[0\]"),
        ({"rule_ids": ["x"]}, "rule_ids"),
        ({"rule_ids": ["x", "x"]}, "rule_ids"),
        ({"max_enumerate": 25}, "max_enumerate"),
        ({"max_enumerate": 0}, "max_enumerate"),
        ({"auto_enumerate": -1}, "auto_enumerate"),
    ],
)
def test_bad_construction_is_named(kwargs, name):
    args = {"action": "act", "rules": [(RULE, 1.0), (Pred("b"), 0.5)], **kwargs}
    with pytest.raises(InputError, match=name):
        RuleCircuit(args.pop("action"), args.pop("rules"), **args)


def test_too_many_predicates_in_one_rule():
    rule = And(tuple(Pred(f"p{i}") for i in range(21)))
    with pytest.raises(InputError, match="at most 20 predicates"):
        RuleCircuit("act", [(rule, 1.0)])


def test_docstring_examples_run():
    failures, tried = doctest.testmod(circuit_module, optionflags=doctest.ELLIPSIS)
    assert tried > 10 and failures == 0
