"""Guardrail speed: exact rule-circuit inference against brute force and pgmpy, decisions per second.

Guardrail (trustlab.agents.Guardrail):

0. Decisions per second of ``Guardrail.check`` on a 20-rule policy whose predicates come from
   deterministic checkers (sensitive data, URLs, action counts, asking the user, provenance),
   over trajectories of 2 to 12 steps, against the straightforward implementation of the same
   decision: every checker run on every step, every rule evaluated on the whole trace with the
   action taken and not (the target is >= 1,000 decisions/s).

Inference (trustlab.agents.circuit):

1. Decisions per second with deterministic (hard) predicates on 20-rule circuits over a 6-step
   history: ``RuleCircuit.infer`` (p_safe and the violated rules) against the plain approach that
   evaluates every rule on the whole trace twice (action taken / not) with the LTLf evaluator.
2. Exact inference as the number F of uncertain (soft) predicates grows, on 20-rule circuits (or
   F + 4 rules beyond 16): the brute-force enumerator (itertools.product over worlds, math.exp;
   up to F = 12, 10 with --quick), pgmpy's variable elimination on the same Markov network (if
   installed), trustlab's vectorised enumeration, and its compiled circuit (PySDD weighted model
   counting) cold (compilation included) and warm (a cached circuit, new evidence each query).
   Prints the seconds per query, the ratios and the largest disagreement between the methods.

    python benchmarks/bench_guardrail.py            # F up to 20
    python benchmarks/bench_guardrail.py --quick    # F up to 16, fewer repeats
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
import warnings
from functools import partial

import numpy as np

from trustlab.agents import Guardrail
from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.circuit import RuleCircuit
from trustlab.agents.logic import Always, And, Implies, Not, Or, Pred, evaluate, parse_rule


def circuit_rules(n_state: int, n_rules: int, rng: np.random.Generator) -> tuple[list[str], list]:
    """``n_rules`` rules ``ALWAYS((act AND x_b) IMPLIES (x_c OR NOT x_d))`` (every other one without
    the action) over ``n_state`` state predicates, weights U[-3, 3]; each predicate is used."""
    names = [f"x{i}" for i in range(n_state)]
    rules = []
    for i in range(n_rules):
        b = i % n_state
        c, d = rng.choice([j for j in range(n_state) if j != b], size=2, replace=False)
        body = And((Pred("act"), Pred(names[b]))) if i % 2 == 0 else Pred(names[b])
        head = Or((Pred(names[c]), Not(Pred(names[d]))))
        rules.append((Always(Implies(body, head)), float(rng.uniform(-3, 3))))
    return names, rules


def random_history(names: list[str], length: int, rng: np.random.Generator) -> list[dict]:
    steps = [{p: bool(rng.random() < 0.5) for p in names} for _ in range(length)]
    for step in steps:
        step["act"] = False
    return steps


def plain_closed_form(rules, history, evidence) -> float:
    """p_safe under hard evidence by evaluating each rule on the whole trace, action on and off."""
    z = 0.0
    for formula, w in rules:
        on = evaluate(formula, [*history, {**evidence, "act": True}])
        off = evaluate(formula, [*history, {**evidence, "act": False}])
        z += w * (int(on) - int(off))
    return 1.0 / (1.0 + math.exp(-z))


def brute_force(rules, history, evidence) -> float:
    """P(act | evidence) world by world: itertools.product over the soft predicates, math.exp."""
    names = sorted(evidence)
    total = {True: 0.0, False: 0.0}
    for values in itertools.product([False, True], repeat=len(names)):
        world = dict(zip(names, values, strict=True))
        unit = math.prod(evidence[p] if world[p] else 1.0 - evidence[p] for p in names)
        for a in (False, True):
            world["act"] = a
            score = sum(w * evaluate(f, [*history, world]) for f, w in rules)
            total[a] += unit * math.exp(score)
    return total[True] / (total[True] + total[False])


def pgmpy_query(rules, history, evidence, names):
    """P(act | evidence) by pgmpy's variable elimination (factors from each rule's residual)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.factors.discrete import DiscreteFactor
        from pgmpy.inference import VariableElimination
        from pgmpy.models import DiscreteMarkovNetwork

    model = DiscreteMarkovNetwork()
    variables = ["act", *names]
    model.add_nodes_from(variables)
    factors = [DiscreteFactor([v], [2], [1.0, 1.0]) for v in variables]
    for formula, w in rules:
        scope = sorted(formula.predicates)
        values = [
            math.exp(w * evaluate(formula, [*history, dict(zip(scope, bits, strict=True))]))
            for bits in itertools.product([False, True], repeat=len(scope))
        ]
        factors.append(DiscreteFactor(scope, [2] * len(scope), values))
        model.add_edges_from(itertools.combinations(scope, 2))
    for p, q in evidence.items():
        factors.append(DiscreteFactor([p], [2], [1.0 - q, q]))
    model.add_factors(*factors)

    def query():
        values = VariableElimination(model).query(["act"], show_progress=False).values
        return float(values[1] / values.sum())

    return query


def per_query(fn, repeats: int) -> tuple[float, object]:
    start = time.perf_counter()
    for _ in range(repeats):
        value = fn()
    return (time.perf_counter() - start) / repeats, value


ACTIONS = ("send_money", "send_email", "open_url", "ask_user", "read_file")


def guard_policy() -> dict:
    """20 rules over 5 actions and 6 condition predicates, each computed by a checker."""
    checkers = {
        "leaks_card": {"type": "sensitive_data", "patterns": ["credit_card", "iban"]},
        "leaks_email": {"type": "sensitive_data", "patterns": ["email"]},
        "trusted_url": {
            "type": "url_match",
            "url": ["https://bank.example", "https://docs.example"],
        },
        "many_payments": {"type": "action_count", "name": "send_money", "op": ">", "value": 3},
        "asked": {"type": "ask_the_user", "mode": "asked_before"},
        "recipient_known": {"type": "argument_mentioned", "arguments": "recipient"},
    }
    templates = [
        ("{a} IMPLIES NOT leaks_card", ["leaks_card"]),
        ("{a} IMPLIES NOT leaks_email", ["leaks_email"]),
        ("ALWAYS({a} IMPLIES trusted_url)", ["trusted_url"]),
        ("{a} IMPLIES NOT many_payments", ["many_payments"]),
    ]
    rules, actions = [], {}
    for a in ACTIONS:
        actions[a] = {"soft_rule_ids": []}
        for k, (logic, preds) in enumerate(templates):
            rid = f"{a}.{k}"
            if a == "send_money" and k == 3:
                logic, preds = (
                    "ALWAYS(send_money IMPLIES (asked AND recipient_known))",
                    [
                        "asked",
                        "recipient_known",
                    ],
                )
            rules.append(
                {
                    "rule_id": rid,
                    "predicates": [
                        [a, "", "", "action"],
                        *[[p, "", "", "condition"] for p in preds],
                    ],
                    "logic": logic.format(a=a),
                    "description": f"rule {k} of {a}",
                }
            )
            actions[a]["soft_rule_ids"].append(rid)
    return {"actions": actions, "rule_list": rules, "checkers": checkers}


def random_action(rng: np.random.Generator) -> dict:
    name = str(rng.choice(ACTIONS))
    url = str(
        rng.choice(["https://bank.example/pay", "https://evil.example/x", "https://docs.example/a"])
    )
    text = str(rng.choice(["hello", "card 4111 1111 1111 1111", "mail bob@example.com", "ok"]))
    action = {"name": name, "url": url, "text": text}
    if name == "send_money":
        action["arguments"] = {"recipient": str(rng.choice(["Bob", "Mallory"])), "amount": 10}
    return action


def plain_check(
    policy: dict, checkers: dict, trajectory: list[dict], action: dict, intent: str
) -> float:
    """The same decision the straightforward way (no caching, no residuals, no circuits)."""
    from trustlab.agents.policy import Action, Step

    steps = [Step(action=Action(**s)) for s in trajectory]
    cand = Action(**action)

    def values(i: int, act: Action) -> dict:
        ctx = CheckContext(history=tuple(steps[:i]), action=act, task_intent=intent)
        out = {p: float(c(ctx)) >= 0.5 for p, c in checkers.items()}
        out.update({a: act.name == a for a in ACTIONS})
        return out

    trace = [values(i, s.action) for i, s in enumerate(steps)]
    last = values(len(steps), cand)
    z = 0.0
    rules = {r["rule_id"]: r for r in policy["rule_list"]}
    for rid in policy["actions"][cand.name]["soft_rule_ids"]:
        formula = parse_rule(rules[rid]["logic"])
        if not formula.temporal:  # judged at the proposed step, as the guardrail does
            on = evaluate(formula, [{**last, cand.name: True}])
            off = evaluate(formula, [{**last, cand.name: False}])
        else:
            on = evaluate(formula, [*trace, {**last, cand.name: True}])
            off = evaluate(formula, [*trace, {**last, cand.name: False}])
        z += int(on) - int(off)
    return 1.0 / (1.0 + math.exp(-z))


def bench_guardrail(quick: bool, rng: np.random.Generator) -> None:
    policy = guard_policy()
    guard = Guardrail(policy)
    checkers = {p: make_checker(spec) for p, spec in policy["checkers"].items()}
    n = 300 if quick else 2000
    intent = "Pay Bob 10 dollars for lunch and email him the receipt."
    queries = []
    for _ in range(n):
        history = [random_action(rng) for _ in range(int(rng.integers(2, 13)))]
        queries.append(
            (
                {"task_intent": intent, "steps": [{"action": a} for a in history]},
                history,
                random_action(rng),
            )
        )
    start = time.perf_counter()
    ours = [guard.check(t, a).p_safe for t, _, a in queries]
    ours_s = time.perf_counter() - start
    plain_n = min(n, 300)
    start = time.perf_counter()
    plain = [plain_check(policy, checkers, h, a, intent) for _, h, a in queries[:plain_n]]
    plain_s = (time.perf_counter() - start) / plain_n * n
    gap = max(abs(a - b) for a, b in zip(ours, plain, strict=False))
    print(
        f"Guardrail.check, 20 rules, 6 checked predicates, 2-12 step trajectories: trustlab "
        f"{n / ours_s:,.0f} decisions/s, straightforward {n / plain_s:,.0f}/s, ratio "
        f"{plain_s / ours_s:.1f}x; largest p_safe gap {gap:.1e}",
        flush=True,
    )


def bench_decisions(quick: bool, rng: np.random.Generator) -> None:
    names, rules = circuit_rules(20, 20, rng)
    circuit = RuleCircuit("act", rules)
    n = 300 if quick else 2000
    queries = [
        (random_history(names, 6, rng), {p: bool(rng.random() < 0.7) for p in names})
        for _ in range(n)
    ]
    start = time.perf_counter()
    ours = [circuit.infer(h, ev).p_safe for h, ev in queries]
    ours_s = time.perf_counter() - start
    plain_n = min(n, 300)
    start = time.perf_counter()
    plain = [plain_closed_form(rules, h, ev) for h, ev in queries[:plain_n]]
    plain_s = (time.perf_counter() - start) / plain_n * n
    gap = max(abs(a - b) for a, b in zip(ours, plain, strict=False))
    print(
        f"hard evidence, 20 rules, 6-step history: trustlab {n / ours_s:,.0f} decisions/s "
        f"(p_safe + violated rules), plain LTLf evaluation {n / plain_s:,.0f}/s, "
        f"ratio {plain_s / ours_s:.1f}x; largest p_safe gap {gap:.1e}",
        flush=True,
    )


def bench_exact(quick: bool, rng: np.random.Generator) -> None:
    sizes = [4, 8, 10, 12, 14, 16] if quick else [4, 8, 10, 12, 14, 16, 18, 20]
    repeats = 3 if quick else 10
    have_pgmpy = True
    try:
        import pgmpy  # noqa: F401
    except ImportError:
        have_pgmpy = False
    print(
        f"{'F':>3} {'brute s':>9} {'pgmpy s':>9} {'enum s':>9} {'compile s':>10} "
        f"{'warm s':>9} {'enum/warm':>9} {'brute/enum':>10} {'max gap':>8}",
        flush=True,
    )
    for F in sizes:
        names, rules = circuit_rules(F, max(20, F + 4), rng)
        history = random_history(names, 4, rng)
        batches = [{p: float(rng.uniform(0.05, 0.95)) for p in names} for _ in range(repeats + 1)]
        evidence = batches[0]
        circuit = RuleCircuit("act", rules, max_enumerate=20)

        def enumerate_once(c=circuit, h=history, e=evidence):
            return c.p_safe(h, e, method="enumerate")

        enum_s, p_enum = per_query(enumerate_once, repeats)
        start = time.perf_counter()
        p_cold = circuit.p_safe(history, evidence, method="compiled")
        cold_s = time.perf_counter() - start

        fresh = iter(batches[1:])

        def compiled_once(c=circuit, h=history, fresh=fresh):
            return c.p_safe(h, next(fresh), method="compiled")

        warm_s, _ = per_query(compiled_once, repeats)
        values = [p_enum, p_cold]
        brute_s = pgmpy_s = math.nan
        if F <= (10 if quick else 12):
            brute_s, p_brute = per_query(partial(brute_force, rules, history, evidence), 1)
            values.append(p_brute)
        if have_pgmpy:
            pgmpy_s, p_pgmpy = per_query(pgmpy_query(rules, history, evidence, names), 1)
            values.append(p_pgmpy)
        gap = max(values) - min(values)
        print(
            f"{F:>3} {brute_s:>9.4f} {pgmpy_s:>9.4f} {enum_s:>9.5f} {cold_s:>10.5f} "
            f"{warm_s:>9.5f} {enum_s / warm_s:>8.1f}x {brute_s / enum_s:>9.0f}x {gap:>8.1e}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    bench_guardrail(args.quick, rng)
    bench_decisions(args.quick, rng)
    bench_exact(args.quick, rng)


if __name__ == "__main__":
    main()
