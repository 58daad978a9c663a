"""Does the no-reference watermark predictor gain from more training images? (spec 05, Table
4-like, beyond the previous model's 3,000; this run made the shipped model.)

Generates ``--n-per-seed`` images of each of ``--seeds`` with the shipped model's generator
settings (:data:`~trustlab.watermark.checkpoints.TRAIN_DATA`: visible, dwtDctSvd and
blind-watermark marks, 8 % clean images), in ``--jobs`` processes, then trains one predictor
per ``--epochs`` value with the shipped settings (:data:`~trustlab.watermark.checkpoints.PARAMS`,
batches of 8) on all of them, each in its own process on ``--device``, and saves each model under
``OUT/epochs_<E>/`` (its fit checkpoints every epoch under ``OUT/epochs_<E>/_state``, so an
interrupted run resumes there). With 12,000 images, 25 epochs are as many optimisation steps as
the previous model's 100 epochs on 3,000 (37,500): the same training length, four times the data.

Each model, and the previous 3,000-image one (``docs/results/watermark_3000``) as the control,
is then read on ``--eval-n`` visible-only images of ``--eval-seed`` generated on the same machine
(so a difference between machines' image libraries cannot favour either). ``scripts/watermark_heldout.py --model OUT/epochs_<E>`` reads a
model on a large held-out set afterwards::

    python scripts/watermark_more_data.py --out wm_more/ --device cuda \\
        [--seeds 1101-1116] [--n-per-seed 750] [--epochs 25,40] [--jobs 16]

Made for a lent GPU machine: on one CPU core, 25 epochs of 12,000 images would take about
3.5 hours.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from pathlib import Path

import numpy as np

from trustlab.watermark.checkpoints import PARAMS, TRAIN_DATA

VISIBLE = ("logo", "text", "pattern")
FIELDS = ("images", "scores", "masks", "content_types")


def _generate(seed: int, n: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from trustlab.watermark.synth import synthesize

    spec = {k: TRAIN_DATA[k] for k in ("kinds", "clean_fraction")}
    data = synthesize(n, random_state=seed, **spec)
    return {k: np.asarray(getattr(data, k)) for k in FIELDS}


def _train(data_path: str, epochs: int, device: str, out: str) -> None:
    import torch

    torch.set_num_threads(2)
    from trustlab.watermark.nr import WatermarkPredictor

    with np.load(data_path) as z:
        data = {k: z[k] for k in FIELDS}
    folder = Path(out) / f"epochs_{epochs}"
    start = time.perf_counter()

    def show(epoch, total, history):
        print(
            f"[{epochs} epochs] epoch {epoch}/{total} at {time.perf_counter() - start:.0f} s: "
            f"{history.summary()}",
            flush=True,
        )

    model = WatermarkPredictor(
        **{**PARAMS, "max_epochs": epochs}, checkpoint_dir=folder / "_state"
    ).fit(
        data["images"],
        scores=data["scores"],
        masks=data["masks"],
        content_types=[str(t) for t in data["content_types"]],
        progress=show,
        device=device,
    )
    model.save(folder)


def _read(model, data) -> dict:
    from trustlab.watermark.evaluation import evaluate_predictions

    result = evaluate_predictions(model.predict(data.images), data).to_dict()
    keep = ("visibility", "location", "content_type_accuracy", "n_images")
    return {k: result[k] for k in keep}


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = (int(v) for v in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(v) for v in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", default="1101-1116")
    parser.add_argument("--n-per-seed", type=int, default=750)
    parser.add_argument("--epochs", default="25,40")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--eval-seed", type=int, default=103)
    parser.add_argument("--eval-n", type=int, default=300)
    parser.add_argument("--data", type=Path, default=Path("/tmp/wm_more_data.npz"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ctx = multiprocessing.get_context("spawn")

    t0 = time.perf_counter()
    if not args.data.is_file():
        seeds = _seeds(args.seeds)
        with ctx.Pool(args.jobs) as pool:
            parts = pool.starmap(_generate, [(s, args.n_per_seed) for s in seeds])
        merged = {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
        np.savez(args.data, **merged)
        print(f"generated {len(merged['scores'])} images in {time.perf_counter() - t0:.0f} s")

    trainers = [
        ctx.Process(target=_train, args=(str(args.data), int(e), args.device, str(args.out)))
        for e in args.epochs.split(",")
    ]
    for p in trainers:
        p.start()
    for p in trainers:
        p.join()
    print(f"trained in {time.perf_counter() - t0:.0f} s in all", flush=True)

    import torch

    torch.set_num_threads(4)
    from trustlab.watermark.nr import WatermarkPredictor
    from trustlab.watermark.synth import synthesize

    test = synthesize(args.eval_n, random_state=args.eval_seed, kinds=VISIBLE)
    small = WatermarkPredictor.load(
        Path(__file__).resolve().parents[1] / "docs/results/watermark_3000"
    )
    numbers = {"3,000 images, 100 epochs": _read(small, test)}
    for e in args.epochs.split(","):
        folder = args.out / f"epochs_{e}"
        if (folder / "model.json").is_file():
            numbers[f"{e} epochs"] = _read(WatermarkPredictor.load(folder), test)
    (args.out / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n")
    print(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main()
