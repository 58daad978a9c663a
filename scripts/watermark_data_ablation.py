"""Table 4-like ablation of spec 05: how the no-reference predictor depends on its training data.

Trains :class:`~trustlab.watermark.nr.WatermarkPredictor` with the shipped model's settings
(:data:`~trustlab.watermark.checkpoints.PARAMS`, 100 epochs) on nested fractions of the shipped
model's 3,000 training images (a fixed random order; 10 % is inside 25 %, which is inside 50 %),
and evaluates each, with ``predict``'s default read-out, on held-out visible-only sets of 300
images. The 100 % row is the shipped model itself. One torch thread::

    python scripts/watermark_data_ablation.py --out wm_ablation/ [--fractions 0.1,0.25,0.5]
        [--seeds 103,105,106] [--order-seed 0] [--steps-matched]

With the same 100 epochs a smaller set also gets fewer optimisation steps (10 %: 3,750 steps of
8 images against 37,500), so the rows mix less data with less training. ``--steps-matched``
trains each fraction for 100 / fraction epochs instead (the full model's number of steps; it costs
as much time per row as the full model, about 100 minutes on one core).

Each fit checkpoints under ``OUT/<percent>/_state`` after every epoch and resumes there, so an
interrupted run loses at most one epoch; ``OUT/ablation.json`` collects the numbers (rewritten
after each fraction).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from trustlab.watermark.checkpoints import PARAMS, TRAIN_DATA, checkpoint_data, load_checkpoint
from trustlab.watermark.evaluation import evaluate_predictions
from trustlab.watermark.nr import WatermarkPredictor
from trustlab.watermark.synth import synthesize

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

    tests = {s: synthesize(300, random_state=s, kinds=VISIBLE) for s in seeds}
    if "1.0" not in record["rows"]:
        record["rows"]["1.0"] = {"n_train": TRAIN_DATA["n"], "seconds": None,
                                 "test": _numbers(load_checkpoint(), tests)}  # fmt: skip
        record_path.write_text(json.dumps(record, indent=1) + "\n")
    train = checkpoint_data("train")
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
                  content_types=part.content_types, progress=show)  # fmt: skip
        model.save(folder)
        record["rows"][key] = {"n_train": k, "max_epochs": params["max_epochs"],
                               "seconds": model.history_.seconds,
                               "test": _numbers(model, tests)}  # fmt: skip
        record_path.write_text(json.dumps(record, indent=1) + "\n")
        print(json.dumps(record["rows"][key]), flush=True)


if __name__ == "__main__":
    main()
