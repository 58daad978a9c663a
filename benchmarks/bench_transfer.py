"""Steering transfer: activation collection for mapper training, and the mapper's fit time.

Two parts (issue 22, "Speed"):

- collection: the activations a mapper trains on, every token of a few hundred short texts
  (chunks of Python's pydoc topics, offline) at one decoder layer of SmolLM2-135M-Instruct
  (float32, CPU). Ours is ``LocalModel.activations(texts, layer, "all")``: batched (similar
  lengths together, right padding) and stopping the forward pass after the layer read. The peer
  is plain transformers one text at a time, unpadded, with ``output_hidden_states=True`` (the
  whole model and its LM head run). The ratio is peer seconds / ours (target >= 3x). Ours is
  also timed reading the last layer (the whole decoder, no early stop) to show what batching
  alone gives. The rows must equal the peer's ``hidden_states[layer + 1]`` (max |difference|
  printed, relative to the largest activation).
- fit: ``ActivationMap()`` with its defaults (the "autoencoder", Adam, early stopping on the
  held-out FVU, ``max_epochs=None``: epochs sized to about 3,500 Adam steps, 10 here) on 10^5
  synthetic token pairs of widths 576 -> 640 (SmolLM2 -> Gemma-3-270M): source rows Gaussian
  with coordinate scales from 0.1 to 10, target an affine map plus a saturating non-linear part
  plus noise. Prints seconds, epochs, seconds per epoch and the held-out FVU (target: under 2
  minutes). ``--max-epochs N`` sets the epochs instead: 200 took 26 minutes on this CPU (held-out
  FVU 0.054, against 0.076 after the default 10 and 0.072 after 20).

Run: python benchmarks/bench_transfer.py [--texts 300] [--layer 15] [--batch-size 16]
     [--threads 1] [--part all|collection|fit] [--pairs 100000] [--max-epochs N]
"""

from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np


def chunks(n: int, max_chars: int = 160) -> list[str]:
    """Up to ``n`` short texts: whole sentences of the pydoc topics, at most ``max_chars`` long,
    six per topic at most (so the texts cover many topics)."""
    from pydoc_data.topics import topics

    out: list[str] = []
    for key in sorted(topics):
        text = " ".join(topics[key].split())
        sentences = re.split(r"(?<=[.!?])\s+", text)
        current, taken = "", 0
        for sentence in sentences:
            if current and len(current) + 1 + len(sentence) > max_chars:
                if len(current) >= 40:
                    out.append(current)
                    taken += 1
                current = ""
                if taken == 6:
                    break
            current = f"{current} {sentence}".strip()[:max_chars]
        if len(out) >= n:
            break
    return out[:n]


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def peer_activations(lm, texts: list[str], layer: int, torch) -> list[np.ndarray]:
    """Plain transformers, one text at a time: ``hidden_states[layer + 1]`` of each."""
    out = []
    with torch.inference_mode():
        for text in texts:
            ids = lm.tokenizer(text, return_tensors="pt").input_ids
            hidden = lm.model(ids, output_hidden_states=True).hidden_states[layer + 1]
            out.append(hidden[0].numpy().copy())
    return out


def bench_collection(lm, n_texts: int, layer: int, batch_size: int, torch) -> None:
    texts = chunks(n_texts)
    n_tokens = sum(len(lm.tokenizer(t)["input_ids"]) for t in texts)
    print(
        f"\ncollection: {len(texts)} texts, {n_tokens} tokens ({n_tokens / len(texts):.1f} a "
        f"text), layer {layer} of {lm.n_layers}, batch {batch_size}; load average "
        f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    lm.activations(texts[:4], layer, "all")  # warm-up
    peer_activations(lm, texts[:2], layer, torch)
    ours, ours_s = timed(lm.activations, texts, layer, "all", batch_size=batch_size)
    last = lm.n_layers - 1
    _, whole_s = timed(lm.activations, texts, last, "all", batch_size=batch_size)
    theirs, peer_s = timed(peer_activations, lm, texts, layer, torch)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(ours, theirs, strict=True))
    scale = max(float(np.abs(b).max()) for b in theirs)
    same_shapes = all(a.shape == b.shape for a, b in zip(ours, theirs, strict=True))
    print(f"{'run':<44} {'seconds':>8} {'tokens/s':>9}")
    for name, seconds in (
        (f"ours, batched, stops after layer {layer}", ours_s),
        (f"ours, batched, whole decoder (layer {last})", whole_s),
        ("transformers, one text at a time", peer_s),
    ):
        print(f"{name:<44} {seconds:>8.2f} {n_tokens / seconds:>9.1f}")
    print(
        f"rows: same shapes {same_shapes}; max |ours - transformers| {diff:.2e} (largest "
        f"|activation| {scale:.1f}, relative {diff / scale:.1e})"
    )
    print(
        f"ours / transformers: {peer_s / ours_s:.2f}x tokens per second at layer {layer} "
        f"(target >= 3x); {peer_s / whole_s:.2f}x through the whole decoder (batching alone)"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def synthetic_pairs(n: int, d_s: int = 576, d_t: int = 640, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d_s)) * 10 ** rng.uniform(-1, 1, d_s)
    X = X.astype(np.float32)
    A = (rng.standard_normal((d_t, d_s)) / np.sqrt(d_s) / X.std(axis=0)).astype(np.float32)
    B = (rng.standard_normal((64, d_s)) / np.sqrt(d_s) / X.std(axis=0)).astype(np.float32)
    C = (rng.standard_normal((d_t, 64)) / 8).astype(np.float32)
    Y = X @ A.T + np.tanh(2 * X @ B.T) @ C.T
    Y += 0.1 * rng.standard_normal((n, d_t)).astype(np.float32)
    return X, Y


def bench_fit(n_pairs: int, max_epochs: int | None) -> None:
    from trustlab.safety.transfer import ActivationMap

    X, Y = synthetic_pairs(n_pairs)
    settings = {} if max_epochs is None else {"max_epochs": max_epochs}
    estimator = ActivationMap(**settings)
    print(
        f"\nfit: {estimator!r} on {n_pairs} pairs, {X.shape[1]} -> {Y.shape[1]}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    fitted, seconds = timed(estimator.fit, X, Y)
    fit = fitted.fit_
    print(
        f"{seconds:.1f} s, {fit.epochs} epochs ({seconds / fit.epochs:.1f} s an epoch; best "
        f"epoch {fit.best_epoch}, stopped early {fit.stopped_early}), held-out FVU "
        f"{fit.held_out_fvu:.4f}, held-out cosine {fit.held_out_cosine:.4f} (target < 120 s)"
    )
    fvus = ", ".join(f"{h['held_out_fvu']:.4f}" for h in fitted.history_[:10])
    print(f"held-out FVU by epoch (first 10): {fvus}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=300, help="texts to collect (default 300)")
    parser.add_argument("--layer", type=int, default=15, help="decoder layer read (default 15)")
    parser.add_argument("--batch-size", type=int, default=16, help="our batch size")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--part", choices=("all", "collection", "fit"), default="all")
    parser.add_argument("--pairs", type=int, default=100_000, help="token pairs for the fit")
    parser.add_argument(
        "--max-epochs",
        type=int,
        default=None,
        help="the fit's max_epochs (default: the estimator's own, sized to the data: 10 epochs "
        "here, about 80 s on 10^5 pairs)",
    )
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    print(f"torch threads {torch.get_num_threads()}")
    if args.part in ("all", "collection"):
        from trustlab.llm import load_model

        lm = load_model("smollm2-135m-instruct")
        print(repr(lm))
        bench_collection(lm, args.texts, args.layer, args.batch_size, torch)
    if args.part in ("all", "fit"):
        bench_fit(args.pairs, args.max_epochs or None)


if __name__ == "__main__":
    main()
