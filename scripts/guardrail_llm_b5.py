"""Spec 17's check B5 with an LLM judge (reported, not gated): the AgentDojo guardrail cases with
every condition predicate of the suite policy judged by SmolLM2-135M-Instruct.

For each suite (``--suites``), the cases of :func:`trustlab.agents.agentdojo_cases` get the oracle
values on their history steps (``GuardCase.with_oracle_history``), so only the proposed step is
judged. Four guardrails then check the same cases:

- ``oracle``: the oracle values of the proposed step as evidence (accuracy 1 by construction);
- ``checkers``: the suite policy's deterministic checkers (``provenance``);
- ``llm``: each condition predicate's checker replaced by an ``llm`` checker on the local model
  (the question is the predicate's description, which the Guardrail fills in), at each epsilon of
  ``--epsilons`` (a compliant action with an uncertain predicate scores below 1/2, see
  ``circuit.decide``; a negative epsilon tolerates that doubt).

Reported per suite and pooled: accuracy, false-positive rate and rule recall with 95 %
cluster-bootstrap intervals (clusters: user tasks), the AUROC of p_safe on the guarded cases (a
threshold-free view), each LLM-judged predicate's mean P(yes) and AUROC against the oracle value,
the number of LLM calls and the seconds per check. The LLM answers are cached by prompt, so the
extra epsilons cost no model calls. Every yes/no question is scored with one forward pass over
the shared prompt (``LocalModel.logprobs(share_prefix=True)``: the same numbers as the default
path up to float32 rounding; checked on the first prompts and reported).

``--max-user-tasks SUITE=N`` subsamples a suite's user tasks (with ``--seed``) to keep the run
short; the JSON says which were used. Writes ``guardrail_llm_b5.json`` and the markdown table
``guardrail_llm_b5.md`` into ``--out`` and prints the table.

Run: OMP_NUM_THREADS=1 python scripts/guardrail_llm_b5.py [--suites banking slack]
[--epsilons 0 -0.2] [--max-user-tasks travel=10] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._results import json_text
from trustlab.agents import Guardrail
from trustlab.agents.agentdojo import SUITES, agentdojo_cases, suite_guardrail, suite_policy
from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.evaluation import METRICS, evaluate_guardrail
from trustlab.llm import load_model

MODEL = "smollm2-135m-instruct"


class CountingModel:
    """The local model seen by the ``llm`` checkers: counts the calls that reach the model, times
    them, and answers a repeated question from memory."""

    def __init__(self, lm: Any):
        self.lm = lm
        self.name = lm.name
        self.calls = 0
        self.asked = 0
        self.seconds = 0.0
        self._memo: dict[tuple, np.ndarray] = {}

    def logprobs(self, prompts, continuations, *, chat=False, batch_size=8, share_prefix=True):
        key = (tuple(prompts), tuple(continuations), bool(chat))
        self.asked += 1
        hit = self._memo.get(key)
        if hit is None:
            start = time.perf_counter()
            hit = self.lm.logprobs(
                list(prompts), list(continuations), chat=chat, share_prefix=share_prefix
            )
            self.seconds += time.perf_counter() - start
            self.calls += 1
            self._memo[key] = hit
        return hit.copy()


def llm_guardrail(suite: str, model: CountingModel, epsilon: float) -> Guardrail:
    """The suite guardrail with an ``llm`` checker (no question: the Guardrail asks about the
    predicate's description) for every condition predicate."""
    policy = suite_policy(suite)
    specs = {
        name: {"type": "llm", "model": model}
        for name, p in policy.predicates.items()
        if p.type == "condition"
    }
    return Guardrail(policy, checkers=specs, epsilon=epsilon, unknown_action="allow")


def _false(ctx: Any) -> bool:
    return False


def block_all(suite: str) -> Guardrail:
    """The trivial reference: every condition predicate false, so every guarded action is
    blocked (reads, which the policy does not guard, stay allowed)."""
    policy = suite_policy(suite)
    falses = {name: _false for name, p in policy.predicates.items() if p.type == "condition"}
    return Guardrail(policy, checkers=falses, unknown_action="allow")


def auroc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """P(score of a positive > score of a negative) + 1/2 P(tie); None without both classes."""
    pos, neg = scores[positive], scores[~positive]
    if len(pos) == 0 or len(neg) == 0:
        return None
    greater = (pos[:, None] > neg[None, :]).mean()
    ties = (pos[:, None] == neg[None, :]).mean()
    return float(greater + 0.5 * ties)


def auroc_interval(scores, positive, clusters, n_bootstrap, rng) -> dict[str, Any]:
    """AUROC with a cluster-bootstrap percentile interval (resamples that lack a class skipped)."""
    estimate = auroc(scores, positive)
    if estimate is None:
        return {"estimate": None, "low": None, "high": None, "n": int(len(scores))}
    names, index = np.unique(clusters, return_inverse=True)
    members = [np.flatnonzero(index == k) for k in range(len(names))]
    draws = []
    for _ in range(n_bootstrap):
        rows = np.concatenate([members[k] for k in rng.integers(0, len(names), len(names))])
        value = auroc(scores[rows], positive[rows])
        if value is not None:
            draws.append(value)
    low, high = np.percentile(draws, [2.5, 97.5]) if draws else (None, None)
    return {"estimate": estimate, "low": float(low), "high": float(high), "n": int(len(scores))}


def blocked_recall(result: Any, n_bootstrap: int, seed: int) -> dict[str, Any]:
    """Rule recall counting a rule only when the action was also blocked (``evaluate_guardrail``'s
    rule recall counts the rules a decision reports whether or not it blocks)."""
    from trustlab.evaluation import cluster_bootstrap_ci

    rows = [r for r in result.records if r["label"] == "unsafe" and r["expected"]]
    values = np.array(
        [
            0.0 if r["allowed"] else np.mean([e in r["violated"] for e in r["expected"]])
            for r in rows
        ]
    )
    clusters = np.array([r["trajectory"] for r in rows])
    if len(values) == 0:
        return {"estimate": None, "low": None, "high": None, "n": 0}
    out = {"estimate": float(values.mean()), "low": None, "high": None, "n": len(values)}
    if len(set(clusters.tolist())) > 1:
        ci = cluster_bootstrap_ci(values, clusters, n_bootstrap=n_bootstrap, random_state=seed)
        out["low"], out["high"] = ci.low, ci.high
    return out


def summarise(result: Any, n_bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    return {
        "rule_recall_if_blocked": blocked_recall(result, n_bootstrap, seed),
        "n_cases": result.n_cases,
        "n_safe": result.n_safe,
        "n_unsafe": result.n_unsafe,
        "confusion": dict(result.confusion),
        "metrics": {k: dict(v) for k, v in result.metrics.items()},
        "seconds_per_check": result.seconds_per_check,
        "errors": list(result.errors),
    }


def parse_limits(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        suite, _, n = item.partition("=")
        if suite not in SUITES or not n.isdigit():
            raise SystemExit(f"--max-user-tasks: expected SUITE=N with SUITE in {SUITES}: {item}")
        out[suite] = int(n)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", nargs="+", default=["banking", "slack"], choices=SUITES)
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.0, -0.2])
    parser.add_argument("--max-user-tasks", nargs="*", default=[], metavar="SUITE=N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-bootstrap", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("guardrail-llm-b5"))
    args = parser.parse_args()
    limits = parse_limits(args.max_user_tasks)
    args.out.mkdir(parents=True, exist_ok=True)
    import torch

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    lm = load_model(MODEL)
    model = CountingModel(lm)
    print(f"{MODEL} loaded in {time.perf_counter() - started:.1f} s", flush=True)
    rng = np.random.default_rng(args.seed)
    report: dict[str, Any] = {
        "model": MODEL,
        "epsilons": args.epsilons,
        "seed": args.seed,
        "threads": args.threads,
        "suites": {},
    }
    all_cases, guards = [], {}
    shared_prefix_check: list[float] = []
    for suite in args.suites:
        cases = agentdojo_cases(suite, max_user_tasks=limits.get(suite), random_state=args.seed)
        cases = [c.with_oracle_history() for c in cases]
        policy = suite_policy(suite)
        guarded = np.array([c.action.name in policy.actions for c in cases])
        users = sorted({c.user_task for c in cases})
        print(
            f"{suite}: {len(cases)} cases ({sum(c.label == 'safe' for c in cases)} safe), "
            f"{int(guarded.sum())} guarded, {len(users)} user tasks",
            flush=True,
        )
        entry: dict[str, Any] = {"user_tasks": users, "subsampled": suite in limits, "modes": {}}
        det = suite_guardrail(suite)
        entry["modes"]["oracle"] = summarise(
            evaluate_guardrail(det, cases, mode="oracle", n_bootstrap=args.n_bootstrap,
                               random_state=args.seed),
            args.n_bootstrap,
            args.seed,
        )  # fmt: skip
        entry["modes"]["checkers"] = summarise(
            evaluate_guardrail(det, cases, mode="checkers", n_bootstrap=args.n_bootstrap,
                               random_state=args.seed),
            args.n_bootstrap,
            args.seed,
        )  # fmt: skip
        entry["modes"]["block all"] = summarise(
            evaluate_guardrail(block_all(suite), cases, mode="checkers",
                               n_bootstrap=args.n_bootstrap, random_state=args.seed),
            args.n_bootstrap,
            args.seed,
        )  # fmt: skip
        for eps in args.epsilons:
            guard = llm_guardrail(suite, model, eps)
            if not shared_prefix_check:  # the one-pass scoring equals the default path
                name = next(n for n, p in policy.predicates.items() if p.type == "condition")
                asker = make_checker({"type": "llm", "model": model, "question": name})
                for c in [c for c, g in zip(cases, guarded, strict=True) if g][:3]:
                    ctx = CheckContext(
                        tuple(c.trajectory.steps), c.action, c.trajectory.task_intent
                    )
                    prompt = asker.prompt(ctx)
                    a = lm.logprobs([prompt] * 2, ["Yes", "No"], chat=True)
                    b = lm.logprobs([prompt] * 2, ["Yes", "No"], chat=True, share_prefix=True)
                    shared_prefix_check.append(float(np.max(np.abs(a - b))))
                print(f"share_prefix vs default: max |diff| {max(shared_prefix_check):.2e}")
            calls, seconds, asked = model.calls, model.seconds, model.asked
            t0 = time.perf_counter()

            def progress(done: int, total: int, suite=suite, eps=eps, t0=t0) -> None:
                if done % 25 == 0 or done == total:
                    print(f"  {suite} eps={eps:g}: {done}/{total} cases, {model.calls} LLM calls,"
                          f" {time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip

            result = evaluate_guardrail(
                guard, cases, mode="checkers", n_bootstrap=args.n_bootstrap,
                random_state=args.seed, progress=progress,
            )  # fmt: skip
            row = summarise(result, args.n_bootstrap, args.seed)
            row["llm_questions"] = model.asked - asked
            row["llm_calls"] = model.calls - calls
            row["llm_seconds"] = model.seconds - seconds
            first = entry["modes"].get(f"llm eps={args.epsilons[0]:g}")
            if first is not None:  # answered from the cache: the cost is the first run's
                row["seconds_per_check_measured"] = row["seconds_per_check"]
                row["seconds_per_check"] = first["seconds_per_check"]
                row["answers_cached"] = True
            p_safe = np.array(
                [np.nan if d is None else d.p_safe for d in result.decisions], dtype=float
            )
            safe = np.array([c.label == "safe" for c in cases])
            clusters = np.array([c.cluster for c in cases])
            ok = guarded & np.isfinite(p_safe)
            row["auroc_p_safe_guarded"] = auroc_interval(
                p_safe[ok], safe[ok], clusters[ok], args.n_bootstrap, rng
            )
            entry["modes"][f"llm eps={eps:g}"] = row
            guards.setdefault(eps, {})[suite] = guard
            if "predicates" not in entry:  # what the LLM said about each predicate vs the oracle
                said: dict[str, list[tuple[float, bool]]] = {}
                for c, d in zip(cases, result.decisions, strict=True):
                    if d is None:
                        continue
                    for name, value in d.predicates.items():
                        if name in c.oracle and isinstance(value, float):
                            said.setdefault(name, []).append((value, bool(c.oracle[name])))
                entry["predicates"] = {
                    name: {
                        "n": len(pairs),
                        "n_true": int(sum(t for _, t in pairs)),
                        "mean_p_yes_if_true": _mean([p for p, t in pairs if t]),
                        "mean_p_yes_if_false": _mean([p for p, t in pairs if not t]),
                        "min_p_yes": min(p for p, _ in pairs),
                        "max_p_yes": max(p for p, _ in pairs),
                        "auroc_vs_oracle": auroc(
                            np.array([p for p, _ in pairs]), np.array([t for _, t in pairs])
                        ),
                    }
                    for name, pairs in sorted(said.items())
                }
                entry["llm_calls_per_guarded_case"] = row["llm_calls"] / max(int(guarded.sum()), 1)
                entry["llm_seconds_per_call"] = row["llm_seconds"] / max(row["llm_calls"], 1)
                entry["seconds_per_guarded_check"] = row["llm_seconds"] / max(int(guarded.sum()), 1)
        report["suites"][suite] = entry
        (args.out / "guardrail_llm_b5.partial.json").write_text(json_text(report))
        all_cases.extend(cases)
        print(table({suite: entry}, args.epsilons), flush=True)
    if len(args.suites) > 1:  # pooled over suites (the LLM answers come from the cache)
        pooled: dict[str, Any] = {"modes": {}}
        det_guards = {s: suite_guardrail(s) for s in args.suites}
        for mode in ("oracle", "checkers"):
            pooled["modes"][mode] = summarise(
                evaluate_guardrail(det_guards, all_cases, mode=mode,
                                   n_bootstrap=args.n_bootstrap, random_state=args.seed),
                args.n_bootstrap,
                args.seed,
            )  # fmt: skip
        pooled["modes"]["block all"] = summarise(
            evaluate_guardrail({s: block_all(s) for s in args.suites}, all_cases,
                               mode="checkers", n_bootstrap=args.n_bootstrap,
                               random_state=args.seed),
            args.n_bootstrap,
            args.seed,
        )  # fmt: skip
        safe = np.array([c.label == "safe" for c in all_cases])
        clusters = np.array([c.cluster for c in all_cases])
        guarded = np.array([c.action.name in suite_policy(c.suite).actions for c in all_cases])
        for k, eps in enumerate(args.epsilons):
            calls = model.calls
            result = evaluate_guardrail(
                guards[eps], all_cases, mode="checkers", n_bootstrap=args.n_bootstrap,
                random_state=args.seed,
            )  # fmt: skip
            assert model.calls == calls, "the pooled run should be answered from the cache"
            row = summarise(result, args.n_bootstrap, args.seed)
            per_suite = [report["suites"][s]["modes"][f"llm eps={eps:g}"] for s in args.suites]
            row["llm_calls"] = sum(r["llm_calls"] for r in per_suite)
            row["llm_questions"] = sum(r["llm_questions"] for r in per_suite)
            row["answers_cached"] = k > 0
            # the cost of a check: the suites' own runs (the pooled one reads cached answers)
            n = sum(r["n_cases"] for r in per_suite)
            row["seconds_per_check"] = (
                sum(r["seconds_per_check"] * r["n_cases"] for r in per_suite) / n
            )
            p_safe = np.array([np.nan if d is None else d.p_safe for d in result.decisions])
            ok = guarded & np.isfinite(p_safe)
            row["auroc_p_safe_guarded"] = auroc_interval(
                p_safe[ok], safe[ok], clusters[ok], args.n_bootstrap, rng
            )
            pooled["modes"][f"llm eps={eps:g}"] = row
        report["pooled"] = pooled
    report["share_prefix_max_abs_diff"] = max(shared_prefix_check, default=None)
    report["llm_calls"] = model.calls
    report["llm_seconds"] = model.seconds
    report["seconds"] = time.perf_counter() - started
    (args.out / "guardrail_llm_b5.json").write_text(json_text(report))
    (args.out / "guardrail_llm_b5.partial.json").unlink(missing_ok=True)
    everything = dict(report["suites"])
    if "pooled" in report:
        everything["all"] = report["pooled"]
    (args.out / "guardrail_llm_b5.md").write_text(table(everything, args.epsilons) + "\n")
    print()
    print(table(everything, args.epsilons))
    print(f"\n{model.calls} LLM calls, {model.seconds:.0f} s in the model; "
          f"{report['seconds']:.0f} s in all")  # fmt: skip


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _cell(m: dict[str, Any]) -> str:
    if m.get("estimate") is None:
        return "n/a"
    if m.get("low") is None:
        return f"{m['estimate']:.3f}"
    return f"{m['estimate']:.3f} [{m['low']:.2f}, {m['high']:.2f}]"


def table(suites: dict[str, Any], epsilons: list[float]) -> str:
    """A markdown table: one row per suite and mode."""
    head = "| suite | predicates | cases (safe/unsafe) | accuracy | FPR | rule recall "
    head += "| recall if blocked | AUROC p_safe (guarded) | LLM calls | s per check |"
    lines = [head, "|" + "---|" * 10]
    for suite, entry in suites.items():
        modes = ["oracle", "checkers", "block all", *(f"llm eps={e:g}" for e in epsilons)]
        for mode in modes:
            row = entry["modes"].get(mode)
            if row is None:
                continue
            cells = [_cell(row["metrics"][k]) for k in METRICS]
            calls = row.get("llm_calls", 0)
            if row.get("answers_cached"):
                calls = f"0 ({row['llm_questions']} cached)"
            auc = row.get("auroc_p_safe_guarded")
            lines.append(
                f"| {suite} | {mode} | {row['n_cases']} ({row['n_safe']}/{row['n_unsafe']}) | "
                + " | ".join(cells)
                + f" | {_cell(row['rule_recall_if_blocked'])}"
                + f" | {_cell(auc) if auc else ''} | {calls} | "
                + f"{row['seconds_per_check']:.3f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
