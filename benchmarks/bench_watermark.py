"""Benchmark: watermarked-image understanding (issue 27).

Times, in one process with one torch thread:

* generation, images per second per kind (:func:`trustlab.watermark.synth.synthesize`; the
  invisible kinds run the watermark libraries' own encoders);
* prediction: the no-reference predictor on 256 x 256 images, ours
  (``WatermarkPredictor.predict``: channels-last layout, its default batches of 2) against a
  one-image-at-a-time loop of the plain network call (the way a per-image tool runs) on the image
  and its mirror image, the score read as ``predict`` reads it, with equal scores checked;
* the text metrics on the same pairs: our batched ROUGE-L against the ``rouge`` 1.0.1 package
  WMarkGPT used, and our BLEU-1 against nltk's ``sentence_bleu``, with equal values checked.

Uses the shipped predictor when it is installed, else one of the same shape trained for one epoch
on 8 images (the speed does not depend on the weights). Run ``python benchmarks/bench_watermark.py
[--images 64] [--part all|generation|prediction|metrics] [--device cpu] [--batch-size 2]``:
``--device cuda`` runs the prediction on a GPU (both sides), with ``--batch-size`` images per
batch for ours.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _rate(n: int, seconds: float) -> str:
    return f"{n / seconds:8.1f} images/s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--part", choices=("all", "generation", "prediction", "metrics"), default="all")
    ap.add_argument("--device", default="cpu", help="where prediction runs: cpu, cuda or auto")
    ap.add_argument("--batch-size", type=int, default=2, help="images per batch in predict")
    args = ap.parse_args()
    for name in ("images", "batch_size"):
        if getattr(args, name) < 1:
            ap.error(
                f"--{name.replace('_', '-')}: expected an integer >= 1, got {getattr(args, name)}"
            )

    import torch

    from trustlab.watermark.describer import describe
    from trustlab.watermark.metrics import bleu1, rouge_l
    from trustlab.watermark.synth import synthesize

    torch.set_num_threads(1)
    n = args.images

    if args.part in ("all", "generation"):
        _generation(n, synthesize)
    if args.part == "generation":
        return
    data = synthesize(n, random_state=8)
    batched = _prediction(args, data, torch)
    if args.part in ("all", "metrics"):
        _metrics(n, data, batched, describe, bleu1, rouge_l)


def _generation(n: int, synthesize) -> None:
    print("generation (256 x 256):")
    for kind, count in [("logo", n), ("text", n), ("pattern", n), ("dwtDctSvd", 16),
                        ("dwtDct", 16), ("blind", 8), ("rivaGan", 2)]:  # fmt: skip
        t0 = time.perf_counter()
        synthesize(count, random_state=7, kinds=(kind,))
        print(f"  {kind:10s} {_rate(count, time.perf_counter() - t0)}")


def _prediction(args, data, torch):
    from trustlab.errors import ConfigError
    from trustlab.watermark.nr import WatermarkPredictor, as_images
    from trustlab.watermark.vocabulary import LEVEL_SCORES

    n, device, bs = args.images, args.device, args.batch_size
    try:
        from trustlab.watermark.checkpoints import load_checkpoint

        model, which = load_checkpoint(), "shipped"
    except ConfigError:
        small = data.subset(np.arange(8))
        model, which = WatermarkPredictor(max_epochs=1), "barely trained"
        model.fit(small.images, scores=small.scores, masks=small.masks,
                  content_types=small.content_types)  # fmt: skip
    images = as_images(data.images)
    model.predict(images[:2], device=device)  # warm-up
    t0 = time.perf_counter()
    batched = model.predict(images, device=device, batch_size=bs)
    t_batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours_single = [model.predict([img], device=device).scores[0] for img in images]
    t_ours_single = time.perf_counter() - t0
    net = model.net_.to(memory_format=torch.contiguous_format)  # the plain layout
    if device != "cpu":
        import copy

        net = copy.deepcopy(net).to(device)
        # float32 proper, as predict runs on a GPU (cuDNN's default TF32 moves scores by ~2e-3)
        torch.backends.cudnn.allow_tf32 = False
    on = next(net.parameters()).device
    with torch.inference_mode():  # warm-up
        net(torch.zeros(1, 3, *images[0].shape[:2], device=on))
    t0 = time.perf_counter()
    levels = torch.tensor(LEVEL_SCORES, dtype=torch.float64, device=on)
    with torch.inference_mode():
        plain = []
        for img in images:
            x = torch.from_numpy(img).permute(2, 0, 1)[None].to(on).float() / 255.0
            views = []
            for view in (x, x.flip(-1)):  # the same read-out: both views, the heads' mean
                score, level_logits, _, heat = net(view)
                torch.sigmoid(heat)  # the heatmap's cost, as predict pays it
                expected = float(torch.softmax(level_logits[0].double(), 0) @ levels)
                views.append((float(score[0]) + expected) / 2)
            plain.append(sum(views) / 2)
    t_loop = time.perf_counter() - t0
    # the loop reads the heads' mean; predict may then clip it into the level head's level
    # (level_readout="level_head", the shipped model's), which the loop leaves out
    mean = np.clip((batched.regressed_scores + batched.expected_scores) / 2, 0.0, 5.0)
    same = np.allclose(mean, plain, atol=1e-4) and np.allclose(
        batched.scores, ours_single, atol=1e-4
    )
    print(f"prediction ({which} predictor, {n} images, on {on}):")
    print(f"  ours (batches of {bs}, channels-last)      {_rate(n, t_batch)}")
    print(f"  ours one image per call                 {_rate(n, t_ours_single)}")
    print(f"  plain network call, one image at a time {_rate(n, t_loop)} (no read-out)")
    print(f"  ratio to the plain loop {t_loop / t_batch:.1f}x, same scores: {same}")
    return batched


def _metrics(n, data, batched, describe, bleu1, rouge_l) -> None:

    refs = [describe(data.facts(i), random_state=i) for i in range(n)]
    cands = [describe(batched.facts(i), random_state=100 + i) for i in range(n)]
    from nltk.translate.bleu_score import sentence_bleu
    from rouge import Rouge

    t0 = time.perf_counter()
    ours_r = rouge_l(refs, cands)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    peer_r = [Rouge().get_scores(c, r)[0]["rouge-l"]["f"] for r, c in zip(refs, cands, strict=True)]
    t_peer = time.perf_counter() - t0
    print(f"ROUGE-L on {n} pairs: ours {t_ours * 1e3:.1f} ms, rouge 1.0.1 {t_peer * 1e3:.1f} ms, "
          f"ratio {t_peer / t_ours:.1f}x, equal: {np.allclose(ours_r, peer_r, atol=1e-12)}")  # fmt: skip
    t0 = time.perf_counter()
    ours_b = bleu1(refs, cands)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    peer_b = [
        sentence_bleu([r.split()], c.split(), weights=(1,))
        for r, c in zip(refs, cands, strict=True)
    ]
    t_peer = time.perf_counter() - t0
    print(f"BLEU-1 on {n} pairs: ours {t_ours * 1e3:.1f} ms, nltk {t_peer * 1e3:.1f} ms, "
          f"ratio {t_peer / t_ours:.1f}x, equal: {np.allclose(ours_b, peer_b, atol=1e-12)}")  # fmt: skip


if __name__ == "__main__":
    main()
