"""Spec 15's CPU-scale plan on SmolLM2-135M-Instruct (not in CI; run after ``sae train`` and
``sae cache``): explanations and scores of real SAE latents, with the paper's control.

For ``--n-latents`` latents drawn (``--seed``) among those with at least ``--min-examples``
activating examples in the cache:

- explanations by SmolLM2-135M-Instruct (``explain_latent``) and by the template baseline (the
  tokens most often marked);
- scores of each explanation: detection and fuzzing with SmolLM2 as the scorer (its answer
  read from P("1") vs P("0"): the 135M model writes no well-formed list), embedding with
  MiniLM, surprisal with SmolLM2;
- the control: the same scores of a shuffled explanation (another drawn latent's, a
  derangement), the paper's "random explanation".

Prints each latent's rows and the means (true vs shuffled), and writes ``sae_real.json`` into
``--out``.

Run: python scripts/sae_real.py --cache CACHE_DIR [--out DIR] [--n-latents 12]
[--min-examples 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from trustlab._results import json_text
from trustlab.interpret import (
    detection_score,
    embedding_score,
    explain_latent,
    fuzzing_score,
    latent_examples,
    load_latent_cache,
    surprisal_score,
    template_explanation,
)
from trustlab.llm import load_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("sae-real"))
    parser.add_argument("--n-latents", type=int, default=12)
    parser.add_argument("--min-examples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    cache = load_latent_cache(args.cache)
    lm = load_model("smollm2-135m-instruct")

    def decode(token: int) -> str:
        return lm.tokenizer.decode([token])

    rng = np.random.default_rng(args.seed)
    eligible = np.flatnonzero(cache.firing_counts >= args.min_examples)
    chosen = sorted(int(i) for i in rng.permutation(eligible)[: args.n_latents])
    print(f"{len(eligible)} latents with >= {args.min_examples} records; scoring {chosen}")
    examples = {
        i: latent_examples(cache, i, n_train=20, n_test=20, n_not_active=20, n_quantiles=5,
                           min_examples=args.min_examples, random_state=args.seed + i)
        for i in chosen
    }  # fmt: skip
    explanations = {}
    for i in chosen:
        model_text = explain_latent(examples[i], lm, decode, max_new_tokens=48).text
        explanations[i] = {
            "smollm2": model_text or "(empty)",
            "template": template_explanation(examples[i], decode).text or "(empty)",
        }
        print(f"latent {i}: {explanations[i]}", flush=True)
    shift = {i: chosen[(k + 1) % len(chosen)] for k, i in enumerate(chosen)}  # a derangement
    rows = []
    for i in chosen:
        for source in ("smollm2", "template"):
            for control in (False, True):
                text = explanations[shift[i] if control else i][source]
                row = {"latent": i, "explainer": source, "shuffled": control, "text": text}
                ex = examples[i]
                found = detection_score(ex, text, lm, decode, answer="logprob")
                row["detection"], row["detection_auroc"] = found.balanced_accuracy, found.auroc
                found = fuzzing_score(ex, text, lm, decode, answer="logprob")
                row["fuzzing"], row["fuzzing_auroc"] = found.balanced_accuracy, found.auroc
                row["embedding"] = embedding_score(ex, text, decode).auroc
                row["surprisal"] = surprisal_score(ex, text, lm, decode).auroc
                rows.append(row)
                print(json.dumps(row), flush=True)
    summary = {}
    for source in ("smollm2", "template"):
        for control in (False, True):
            picked = [r for r in rows if r["explainer"] == source and r["shuffled"] == control]
            key = f"{source}{' shuffled' if control else ''}"
            summary[key] = {
                m: float(np.nanmean([r[m] for r in picked]))
                for m in (
                    "detection",
                    "detection_auroc",
                    "fuzzing",
                    "fuzzing_auroc",
                    "embedding",
                    "surprisal",
                )  # fmt: skip
            }
            print(key, {m: round(v, 3) for m, v in summary[key].items()})
    result = {"latents": chosen, "explanations": explanations, "rows": rows,
              "means": summary, "seconds": time.perf_counter() - started}  # fmt: skip
    (args.out / "sae_real.json").write_text(json_text(result))
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
