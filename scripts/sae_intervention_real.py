"""Intervention scoring of real SAE latents on SmolLM2-135M-Instruct, with the spec's two
controls (not in CI; run after ``sae train`` and ``sae cache``).

For ``--n-latents`` latents drawn (``--seed``) among those with at least ``--min-examples``
activating examples in the cache, and as many latents of a randomly initialised SAE of the
same shape (unit decoder rows drawn at random: the spec's random-latent control):

- prompts: the latent's activating examples cut after their first firing token, 10 training
  ones for the explainer and 40 held-out ones for the score (the paper's split); the random
  latents reuse the prompts of the real latent in the same position;
- the strength calibrated to 0.5 nats on the scoring prompts;
- explanations of the output effects: 5 sampled from SmolLM2 (``explain_effects``) and the
  template (the most promoted tokens, ``effects_template``);
- the score of every explanation on the same generations, and of a shuffled one (the
  template of another drawn latent: the paper's random explanation).

Prints each latent's row and the means; writes ``sae_intervention_real.json`` into ``--out``.

Run: python scripts/sae_intervention_real.py --sae SAE_DIR --cache CACHE_DIR [--out DIR]
[--n-latents 6] [--min-examples 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from trustlab._results import json_text
from trustlab.interpret import (
    SparseAutoencoder,
    calibrate_strength,
    effects_template,
    explain_effects,
    intervention_prompts,
    intervention_score,
    kl_curve,
    latent_examples,
    load_latent_cache,
    load_sae,
    output_effects,
)
from trustlab.llm import load_model


def _score(lm, sae, latent, train, test, shuffled, seed) -> dict:
    start = time.perf_counter()
    found = calibrate_strength(kl_curve(lm, sae, latent, test))
    effects = output_effects(lm, sae, latent, train, found.strength)
    model_made = list(dict.fromkeys(explain_effects(effects, lm, random_state=seed)))
    template = effects_template(effects)
    explanations = [template, *model_made, shuffled]
    score = intervention_score(lm, sae, latent, test, explanations, found.strength,
                               random_state=seed)  # fmt: skip
    values = dict(zip(explanations, score.scores, strict=True))
    sems = dict(zip(explanations, score.sems, strict=True))
    return {
        "latent": latent,
        "strength": found.strength,
        "kl": found.kl,
        "converged": found.converged,
        "top_tokens": effects.top_tokens(5),
        "template": template,
        "template_score": values[template],
        "template_sem": sems[template],
        "model_explanations": model_made,
        "model_best": max((values[e] for e in model_made), default=float("nan")),
        "shuffled": shuffled,
        "shuffled_score": values[shuffled],
        "seconds": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sae", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("sae-intervention-real"))
    parser.add_argument("--n-latents", type=int, default=6)
    parser.add_argument("--min-examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    sae, cache = load_sae(args.sae), load_latent_cache(args.cache)
    lm = load_model(cache.model)
    rng = np.random.default_rng(args.seed)
    counts = np.diff(cache.latent_offsets)
    latents = sorted(rng.choice(np.flatnonzero(counts >= args.min_examples), args.n_latents,
                                replace=False).tolist())  # fmt: skip

    def decode(token: int) -> str:
        return lm.tokenizer.decode([token])

    prompts = {}
    for latent in latents:
        examples = latent_examples(cache, latent, n_train=10, n_test=40,
                                   min_examples=args.min_examples, random_state=args.seed)  # fmt: skip
        prompts[latent] = (intervention_prompts(examples, decode, split="train"),
                           intervention_prompts(examples, decode))  # fmt: skip
    W = rng.normal(size=sae.W_dec_.shape)
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    random_sae = SparseAutoencoder.from_weights(W.T, np.zeros(len(W)), W, np.zeros(W.shape[1]),
                                                k=sae.k, layer=sae.layer_)  # fmt: skip
    rows = {"real": [], "random": []}
    previous = "nothing in particular"
    for kind, model in (("real", sae), ("random", random_sae)):
        templates = []
        for position, latent in enumerate(latents):
            train, test = prompts[latent]
            shuffled = previous if position == 0 else templates[-1]
            row = _score(lm, model, latent, train, test, shuffled, args.seed)
            templates.append(row["template"])
            previous = row["template"]
            rows[kind].append(row)
            print(f"{kind} latent {latent}: strength {row['strength']:.3g} (KL {row['kl']:.3f}); "
                  f"promotes {[t for t, _ in row['top_tokens']]}; template "
                  f"{row['template']!r} {row['template_score']:.3f} +- {row['template_sem']:.3f}; "
                  f"SmolLM2 best {row['model_best']:.3f} of {row['model_explanations']}; "
                  f"shuffled {row['shuffled_score']:.3f}; {row['seconds']:.0f} s", flush=True)  # fmt: skip
    means = {
        kind: {key: float(np.nanmean([r[key] for r in found]))
               for key in ("template_score", "model_best", "shuffled_score", "seconds")}
        for kind, found in rows.items()
    }  # fmt: skip
    for kind, values in means.items():
        print(kind, {k: round(v, 3) for k, v in values.items()})
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sae_intervention_real.json").write_text(json_text({"rows": rows, "means": means}))


if __name__ == "__main__":
    main()
