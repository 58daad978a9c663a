"""Benchmark: the safety polytope's detection overhead per generated token (SmolLM2-135M).

The work (issue 9): greedy generation of the same prompts (held-out HarmBench and benign
prompts, chat template, one prompt at a time) three ways, interleaved over repeats:

* plain: ``LocalModel.generate`` (the baseline, no hook);
* detection: a hook at the polytope's layer that evaluates every facet on the newest state of
  every step (``SafetyPolytope.is_unsafe``) and leaves the state as it is;
* Safe Flow: detection plus the exact projection of flagged states at every step
  (``steered_generate(polytope, model, prompts, correct_first=max_new_tokens)``).

It prints the median seconds per generated token of each and the overheads against plain
generation. On a shared machine the wall-clock difference of two runs is mostly noise, so the
time spent inside the detection hook is also measured directly and set against the time of a
plain token. Target: detection overhead under 5%.

Run ``python benchmarks/bench_polytope.py`` (full) or with ``--quick`` (a small run).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2+2 prompts, 16 tokens, 2 repeats")
    parser.add_argument("--layer", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()
    n_prompts, new_tokens, repeats, per_category = (2, 16, 2, 24) if args.quick else (3, 32, 2, 64)

    import torch

    from trustlab.llm import load_model
    from trustlab.safety import (
        SafetyPolytope,
        load_safety_prompts,
        prompt_activations,
        steered_generate,
    )

    torch.set_num_threads(args.threads)
    model = load_model("smollm2-135m-instruct")
    kwargs = {"sources": ["harmbench", "benign"], "max_per_category": per_category}
    train = load_safety_prompts("train", **kwargs)
    test = load_safety_prompts("test", **kwargs)
    acts = prompt_activations(model, train.prompts, args.layer)
    polytope = SafetyPolytope(n_facets=4, facet_l1=0.1, layer=args.layer, random_state=0)
    polytope.fit(acts, train.unsafe)
    chosen = np.r_[
        np.flatnonzero(test.unsafe)[:n_prompts], np.flatnonzero(~test.unsafe)[:n_prompts]
    ]
    prompts = [test.prompts[i] for i in chosen]

    hook_seconds = [0.0]

    def detect(h):
        start = time.perf_counter()
        polytope.is_unsafe(h[:, -1, :].double().numpy())
        hook_seconds[0] += time.perf_counter() - start
        return h

    def plain():
        return [model.generate([p], new_tokens, batch_size=1)[0] for p in prompts]

    def detection():
        with model.intervene(args.layer, detect):
            return [model.generate([p], new_tokens, batch_size=1)[0] for p in prompts]

    def safe_flow():
        steered = steered_generate(polytope, model, prompts, new_tokens, correct_first=new_tokens)
        return list(steered.texts)

    runs = {"plain": plain, "detection": detection, "safe flow": safe_flow}
    per_token = {name: [] for name in runs}
    hook_per_token = []
    for _ in range(repeats):
        for name, run in runs.items():
            hook_seconds[0] = 0.0
            start = time.perf_counter()
            texts = run()
            seconds = time.perf_counter() - start
            tokens = sum(
                len(model.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts
            )
            per_token[name].append(seconds / max(tokens, 1))
            if name == "detection":
                hook_per_token.append(hook_seconds[0] / max(tokens, 1))
    medians = {name: statistics.median(v) for name, v in per_token.items()}
    print(
        f"{len(prompts)} prompts x up to {new_tokens} tokens, layer {args.layer}, {repeats} repeats"
    )
    for name, value in medians.items():
        print(f"{name:>10}: {1000 * value:8.2f} ms per generated token")
    base = medians["plain"]
    # the wall-clock difference drowns in the load of a shared machine; the time spent inside
    # the detection hook is measured directly and compared with a plain token's time
    hook = statistics.median(hook_per_token)
    print(f"detection hook: {1000 * hook:.3f} ms per generated token")
    print(
        f"detection overhead (hook time / plain token time): {100 * hook / base:.2f}% (target < 5%)"
    )
    print(f"detection overhead (wall clock): {100 * (medians['detection'] / base - 1):+.2f}%")
    print(f"Safe Flow overhead: {100 * (medians['safe flow'] / base - 1):+.2f}%")
    print(f"ratio detection / plain: {medians['detection'] / base:.4f}")


if __name__ == "__main__":
    main()
