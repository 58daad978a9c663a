"""Sparse autoencoders: training steps/s against sae_lens, and caching throughput.

The work (issue 23, "Speed"): a TopK SAE of SmolLM2-135M's width (d = 576), 8x wide (4,608
latents), k = 32, batches of 1,024 rows, float32 on CPU. Rows are synthetic (Gaussian with a
few large coordinates, the shape of residual-stream activations); a training step's cost does
not depend on their values.

- ours: ``SparseAutoencoder(...).fit`` on ``steps x 1,024`` rows for one epoch (Adam, the
  decoder kept at unit norm, the resampling check included), timed from the first step to the
  last (the progress callback marks them, so set-up and the final metrics are left out);
- peer: sae_lens 6's ``TopKTrainingSAE`` (the class its trainer steps): per step
  ``training_forward_pass`` (its forward, MSE and the TopK auxiliary loss), ``backward`` and an
  Adam step, the same batch size and widths.

The two run alternately ``--repeats`` times (the load of a shared machine drifts); it prints
each round's steps/s and ratio, and the median ratio ours / peer.

Caching (``--part cache``): the latent cache of a TopK SAE (576 -> 4,608, k=32; random weights:
the cost does not depend on them) over pydoc texts of up to 1,000 characters through
SmolLM2-135M-Instruct at block 15. Ours: ``cache_latents`` (batches of 8 texts, the forward
pass stopped after the block, sparse records). The naive loop: plain transformers one text at a
time with ``output_hidden_states=True`` (the whole model), the SAE applied in torch, the
non-zero entries kept. Tokens/s for both and the ratio (target >= 3x); the two must keep the
same records. Also ours with the model in bfloat16 (``autocast="bfloat16"``), against the same
float32 loop: a change of precision, not of method, reported with the share of float32's
records it keeps.

Scoring (``--part score``): seconds per latent for each scorer with SmolLM2-135M-Instruct as
the scorer (the issue: scoring a latent with the local model must not dominate). The SAE of the
caching part, the latent with about 300 records over the cached texts, its template
explanation; detection and fuzzing with probability answers (one prompt per example),
embedding (MiniLM), surprisal, and intervention scoring (the strength calibrated on 40 prompts,
then one explanation scored on them). No peer runs this offline on CPU (delphi needs vLLM).

``--sae DIR`` caches with a trained SAE instead (its records, and so the bfloat16 agreement,
are those of a real run; with random weights the TopK choice is close to ties everywhere).

Run: python benchmarks/bench_sae.py [--part all|train|cache|score] [--steps 60] [--repeats 3]
[--texts 64] [--threads 1] [--sae DIR]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

D, LATENTS, K, BATCH = 576, 4608, 32, 1024


def rows(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)).astype(np.float32)
    X[:, :4] *= 30.0  # a few massive coordinates, as in a residual stream
    return X


def bench_ours(steps: int) -> float:
    from trustlab.interpret import SparseAutoencoder

    X = rows(steps * BATCH)
    marks: list[float] = []
    sae = SparseAutoencoder(
        n_latents=LATENTS, k=K, max_epochs=1, batch_size=BATCH, validation_fraction=0.0
    )
    sae.fit(X, progress=lambda done, total: marks.append(time.perf_counter()))
    return (len(marks) - 1) / (marks[-1] - marks[0])


def bench_peer(steps: int, torch) -> float:
    from sae_lens.saes.sae import TrainStepInput
    from sae_lens.saes.topk_sae import TopKTrainingSAE, TopKTrainingSAEConfig

    cfg = TopKTrainingSAEConfig(d_in=D, d_sae=LATENTS, k=K, dtype="float32", device="cpu")
    sae = TopKTrainingSAE(cfg)
    optimizer = torch.optim.Adam(sae.parameters(), lr=2e-4)
    X = torch.from_numpy(rows(steps * BATCH))
    dead = torch.zeros(LATENTS, dtype=torch.bool)
    times = []
    for step in range(steps):
        times.append(time.perf_counter())
        batch = X[step * BATCH : (step + 1) * BATCH]
        out = sae.training_forward_pass(
            TrainStepInput(
                sae_in=batch,
                coefficients={},
                dead_neuron_mask=dead,
                n_training_steps=step,
                is_logging_step=False,
            )
        )
        optimizer.zero_grad()
        out.loss.backward()
        optimizer.step()
    times.append(time.perf_counter())
    return (len(times) - 2) / (times[-1] - times[1])


def _shared_records(a, b, latents) -> float:
    """Mean Jaccard index of two caches' (context, position) records over ``latents``."""
    values = []
    for i in latents:
        first, second = ({(int(c), int(p)) for c, p, _ in zip(*x.latent(i), strict=True)}
                         for x in (a, b))  # fmt: skip
        values.append(len(first & second) / max(1, len(first | second)))
    return float(np.mean(values))


def bench_cache(
    n_texts: int, torch, sae_dir: str | None = None, model: str = "smollm2-135m-instruct",
    device: str = "cpu", batch_size: int = 8,
) -> None:  # fmt: skip
    from trustlab.interpret import SparseAutoencoder, cache_latents, load_sae, pydoc_texts
    from trustlab.llm import load_model

    lm = load_model(model, device=device)
    texts = pydoc_texts()[:n_texts]
    layer = 15
    if sae_dir is None:
        sae = SparseAutoencoder(n_latents=LATENTS, k=K, max_epochs=1, batch_size=BATCH)
        sae.fit(rows(2 * BATCH), model_name=lm.name, layer=layer)
    else:  # a trained SAE at block 15: records as a real run keeps them
        sae = load_sae(sae_dir)
    cache_latents(lm, sae, texts[:2], batch_size=batch_size)  # warm-up (a GPU's start-up)
    with torch.inference_mode():
        lm.model(lm.tokenizer(texts[0], return_tensors="pt").input_ids.to(lm.model.device))
    start = time.perf_counter()
    cache = cache_latents(lm, sae, texts, batch_size=batch_size)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    low = cache_latents(lm, sae, texts, batch_size=batch_size, autocast="bfloat16")
    ours_bf16 = time.perf_counter() - start
    on = lm.model.device
    weights = [torch.from_numpy(getattr(sae, n + "_")).to(on) for n in ("W_enc", "b_enc")]
    b_dec = torch.from_numpy(sae.b_dec_).to(on)
    start = time.perf_counter()
    n_records = 0
    with torch.inference_mode():
        for text in texts:
            ids = lm.tokenizer(text, return_tensors="pt").input_ids.to(on)
            hidden = lm.model(ids, output_hidden_states=True).hidden_states[layer + 1][0, 1:]
            pre = (hidden - b_dec) @ weights[0] + weights[1]
            values, _ = pre.topk(K, dim=-1)
            n_records += int((values > 0).sum())
    naive = time.perf_counter() - start
    tokens = cache.n_tokens
    print(f"cache on {lm.model.device}: {len(texts)} texts, {tokens} tokens, {cache.n_records} records (naive loop: "
          f"{n_records})")  # fmt: skip
    print(f"ours (cache_latents): {tokens / ours:.0f} tokens/s; naive per-text loop: "
          f"{tokens / naive:.0f} tokens/s; ratio {naive / ours:.2f}x (target >= 3x)")  # fmt: skip
    same = _shared_records(cache, low, range(0, LATENTS, 97))
    print(f"ours in bfloat16 (autocast='bfloat16'): {tokens / ours_bf16:.0f} tokens/s, "
          f"{naive / ours_bf16:.2f}x the float32 naive loop (precision differs: records shared "
          f"with float32's, Jaccard over sampled latents {same:.3f})")  # fmt: skip


def bench_score(n_texts: int) -> None:
    from trustlab.interpret import (
        SparseAutoencoder,
        cache_latents,
        calibrate_strength,
        detection_score,
        embedding_score,
        fuzzing_score,
        intervention_prompts,
        intervention_score,
        kl_curve,
        latent_examples,
        pydoc_texts,
        surprisal_score,
        template_explanation,
    )
    from trustlab.llm import load_model
    from trustlab.llm.embeddings import embed_texts

    lm = load_model("smollm2-135m-instruct")
    sae = SparseAutoencoder(n_latents=LATENTS, k=K, max_epochs=1, batch_size=BATCH)
    sae.fit(rows(2 * BATCH), model_name=lm.name, layer=15)
    cache = cache_latents(lm, sae, pydoc_texts()[:n_texts], batch_size=8)
    counts = np.diff(cache.latent_offsets)  # a latent with 50 test and 50 non-activating windows
    latent = int(np.argmin(np.abs(counts - 300)))
    examples = latent_examples(cache, latent, min_examples=1, random_state=0)

    def decode(token: int) -> str:
        return lm.tokenizer.decode([token])

    text = template_explanation(examples, decode).text
    embed_texts(["warm up"])  # the embedder's one-off load is not a per-latent cost
    print(f"score: latent {latent} ({examples.summary()}); explanation {text!r}")
    prompts = intervention_prompts(examples, decode)[:40]

    def intervention() -> float:
        found = calibrate_strength(kl_curve(lm, sae, latent, prompts))
        return intervention_score(lm, sae, latent, prompts, [text], found.strength).score

    work = {
        "detection": lambda: detection_score(examples, text, lm, decode, answer="logprob").auroc,
        "fuzzing": lambda: fuzzing_score(examples, text, lm, decode, answer="logprob").auroc,
        "embedding": lambda: embedding_score(examples, text, decode).auroc,
        "surprisal": lambda: surprisal_score(examples, text, lm, decode).auroc,
        "intervention": intervention,
    }
    for name, call in work.items():
        start = time.perf_counter()
        value = call()
        print(f"  {name}: {time.perf_counter() - start:.1f} s per latent (score {value:.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="training steps timed (default 60)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--part", choices=("all", "train", "cache", "score"), default="all")
    parser.add_argument("--texts", type=int, default=64, help="texts cached (default 64)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--sae", help="a trained SAE folder (block 15) for the caching part")
    parser.add_argument("--model", default="smollm2-135m-instruct", help="for load_model")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto (caching part)")
    parser.add_argument("--batch-size", type=int, default=8, help="texts per batch (caching)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    print(
        f"TopK SAE d={D} -> {LATENTS} latents, k={K}, batch {BATCH}; torch threads "
        f"{torch.get_num_threads()}; load average {os.getloadavg()[0]:.2f}"
    )
    if args.part in ("all", "cache"):
        bench_cache(args.texts, torch, args.sae, args.model, args.device, args.batch_size)
    if args.part in ("all", "score"):
        bench_score(args.texts)
    if args.part in ("cache", "score"):
        return
    ratios = []
    for round_ in range(1, args.repeats + 1):
        ours = bench_ours(args.steps)
        try:
            peer = bench_peer(args.steps, torch)
        except ImportError:
            print("peer: sae_lens is not installed (pip install sae-lens)")
            return
        ratios.append(ours / peer)
        print(
            f"round {round_}: ours (SparseAutoencoder.fit) {ours:.2f} steps/s, peer (sae_lens "
            f"TopKTrainingSAE step + Adam) {peer:.2f} steps/s, ratio {ours / peer:.2f}x"
        )
    print(
        f"median ratio ours / peer: {float(np.median(ratios)):.2f}x; load average after "
        f"{os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
