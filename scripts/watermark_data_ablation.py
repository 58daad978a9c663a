"""Table 4-like ablation of spec 05: how the no-reference predictor depends on its training data.

Trains :class:`~trustlab.watermark.nr.WatermarkPredictor` with the previous shipped model's
settings (:data:`~trustlab.watermark.checkpoints.SMALL_PARAMS`, 100 epochs) on nested fractions of
that model's 3,000 training images (a fixed random order; 10 % is inside 25 %, which is inside 50 %),
and evaluates each, with ``predict``'s default read-out, on held-out visible-only sets of 300
images. The 100 % row is that model itself (docs/results/watermark_3000/). One torch thread::

    python scripts/watermark_data_ablation.py --out wm_ablation/ [--fractions 0.1,0.25,0.5]
        [--seeds 103,105,106] [--order-seed 0] [--steps-matched]

With the same 100 epochs a smaller set also gets fewer optimisation steps (10 %: 3,750 steps of
8 images against 37,500), so the rows mix less data with less training. ``--steps-matched``
trains each fraction for 100 / fraction epochs instead (the full model's number of steps; it costs
as much time per row as the full model, about 100 minutes on one core).

Each fit checkpoints under ``OUT/<percent>/_state`` after every epoch and resumes there, so an
interrupted run loses at most one epoch; ``OUT/ablation.json`` collects the numbers (rewritten
after each fraction). ``--device cuda`` trains on a GPU (the draws are the CPU generator's, so the
batches are the same; the arithmetic is not bit for bit).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from trustlab.watermark.checkpoints import SMALL_PARAMS as PARAMS
from trustlab.watermark.checkpoints import SMALL_TRAIN_DATA as TRAIN_DATA
from trustlab.watermark.checkpoints import checkpoint_data
from trustlab.watermark.evaluation import evaluate_predictions
from trustlab.watermark.nr import WatermarkPredictor
from trustlab.watermark.synth import synthesize

SMALL_MODEL = Path(__file__).resolve().parents[1] / "docs/results/watermark_3000"
VISIBLE = ("logo", "text", "pattern")


def _numbers(model, tests) -> dict:
    out = {}
    for seed, data in tests.items():
        ev = evaluate_predictions(model.predict(data.images), data)
        out[str(seed)] = {**ev.visibility, **ev.location}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--fractions", default="0.1,0.25,0.5")
    ap.add_argument("--seeds", default="103,105,106")
    ap.add_argument("--order-seed", type=int, default=0)
    ap.add_argument("--steps-matched", action="store_true")
    ap.add_argument("--device", default="cpu", help="where to train (cpu, cuda, auto)")
    ap.add_argument("--jobs", type=int, default=1, help="processes generating the images")
    args = ap.parse_args()
    torch.set_num_threads(1)
    fractions = [float(f) for f in args.fractions.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    record_path = args.out / "ablation.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    record.update({"params": PARAMS, "train_data": TRAIN_DATA, "order_seed": args.order_seed,
                   "steps_matched": args.steps_matched, "test_seeds": seeds,
                   "rows": record.get("rows", {})})  # fmt: skip

    tests = {s: synthesize(300, random_state=s, kinds=VISIBLE, n_jobs=args.jobs) for s in seeds}
    if "1.0" not in record["rows"]:
        record["rows"]["1.0"] = {"n_train": TRAIN_DATA["n"], "seconds": None,
                                 "test": _numbers(WatermarkPredictor.load(SMALL_MODEL), tests)}  # fmt: skip
        record_path.write_text(json.dumps(record, indent=1) + "\n")
    train = checkpoint_data("train_small", n_jobs=args.jobs)
    order = np.random.default_rng(args.order_seed).permutation(len(train))
    for fraction in fractions:
        key = str(fraction)
        if key in record["rows"]:
            continue
        k = int(round(fraction * len(train)))
        part = train.subset(np.sort(order[:k]))

        def show(epoch, total, history, k=k):
            print(f"{k} images, epoch {epoch}/{total}: {history.summary()}", flush=True)

        folder = args.out / f"{round(100 * fraction)}pct"
        params = dict(PARAMS)
        if args.steps_matched:
            params["max_epochs"] = int(round(PARAMS["max_epochs"] / fraction))
        model = WatermarkPredictor(**params, checkpoint_dir=folder / "_state")
        model.fit(part.images, scores=part.scores, masks=part.masks,
                  content_types=part.content_types, progress=show,
                  device=args.device)  # fmt: skip
        model.save(folder)
        record["rows"][key] = {"n_train": k, "max_epochs": params["max_epochs"],
                               "seconds": model.history_.seconds,
                               "test": _numbers(model, tests)}  # fmt: skip
        record_path.write_text(json.dumps(record, indent=1) + "\n")
        print(json.dumps(record["rows"][key]), flush=True)


if __name__ == "__main__":
    main()
