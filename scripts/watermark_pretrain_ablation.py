"""Table 5-like ablation of spec 05: does pretraining the location head on Position-lite help?

WMarkGPT's first stage teaches the model where objects are (WQA-Position) before it learns about
watermarks. The analogue for the no-reference predictor: train its heatmap (and the encoder under
it) to find the objects of Position-lite scenes (:func:`~trustlab.watermark.export.position_lite`;
the target is the union of the objects' boxes; the score, level and content terms have weight 0),
then train the whole predictor on watermarks from those weights (``warm_start``) with the shipped
settings of the previous shipped model (:data:`~trustlab.watermark.checkpoints.SMALL_PARAMS`). The control trains the same predictor
from a fresh initialisation. Both arms see the same watermark images: a nested fraction of the
shipped model's 3,000 training images (the subsets of ``watermark_data_ablation.py``, same order
seed), and each arm runs with several training seeds, so the difference between arms can be set
against the spread between seeds of one arm. Evaluated, with ``predict``'s default read-out, on
the held-out visible-only sets of Table 4 (300 images each). One torch thread::

    python scripts/watermark_pretrain_ablation.py --out wm_pretrain/ [--fraction 0.25]
        [--arms none,position] [--random-states 0,1] [--n-position 1000]
        [--pretrain-epochs 15] [--seeds 103,105,106]

Every fit checkpoints under ``OUT/<arm>_rs<seed>/`` after each epoch and resumes there;
``OUT/pretrain_ablation.json`` collects the numbers (rewritten after each run), so several
processes can share the work by taking different arms or seeds (each writes its own
``OUT/<arm>_rs<seed>.json`` and the collection is rebuilt from those).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from watermark_data_ablation import VISIBLE, _numbers  # the same held-out sets and numbers

from trustlab.watermark.checkpoints import SMALL_PARAMS as PARAMS
from trustlab.watermark.checkpoints import SMALL_TRAIN_DATA as TRAIN_DATA
from trustlab.watermark.checkpoints import checkpoint_data
from trustlab.watermark.export import position_lite
from trustlab.watermark.nr import WatermarkPredictor
from trustlab.watermark.synth import synthesize

#: Position-lite scenes for pretraining come from a seed no test set uses.
POSITION_SEED = 7


def object_masks(pos) -> np.ndarray:
    """(n, H, W) bool: the union of each scene's object boxes."""
    masks = np.zeros(pos.images.shape[:3], dtype=bool)
    for i, rec in enumerate(pos.records):
        for obj in rec["structured"]["objects"]:
            x0, y0, x1, y1 = obj["box"]
            masks[i, y0:y1, x0:x1] = True
    return masks


def heatmap_iou(model, pos, masks: np.ndarray) -> float:
    """Mean IoU of the predicted region and the object boxes on held-out scenes."""
    pred = model.predict(pos.images)
    ious = []
    for i in range(len(pos)):
        region = pred.heatmap(i) >= 0.5
        if region.shape != masks[i].shape:
            raise ValueError("heatmap and mask sizes differ")
        union = np.logical_or(region, masks[i]).sum()
        ious.append(np.logical_and(region, masks[i]).sum() / union if union else 1.0)
    return float(np.mean(ious))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--fraction", type=float, default=0.25)
    ap.add_argument("--arms", default="none,position")
    ap.add_argument("--random-states", default="0,1")
    ap.add_argument("--n-position", type=int, default=1000)
    ap.add_argument("--pretrain-epochs", type=int, default=15)
    ap.add_argument("--seeds", default="103,105,106")
    ap.add_argument("--order-seed", type=int, default=0)
    ap.add_argument("--max-epochs", type=int, default=PARAMS["max_epochs"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    arms = args.arms.split(",")
    if set(arms) - {"none", "position"}:
        ap.error("--arms takes none and/or position")
    states = [int(s) for s in args.random_states.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)

    train = checkpoint_data("train_small")
    order = np.random.default_rng(args.order_seed).permutation(len(train))
    k = int(round(args.fraction * len(train)))
    part = train.subset(np.sort(order[:k]))
    tests = {s: synthesize(300, random_state=s, kinds=VISIBLE) for s in seeds}
    held_out = position_lite(200, random_state=POSITION_SEED + 1)
    held_masks = object_masks(held_out)
    params = {**PARAMS, "max_epochs": args.max_epochs}

    for arm in arms:
        for rs in states:
            name = f"{arm}_rs{rs}"
            done = args.out / f"{name}.json"
            if done.exists():
                continue
            folder = args.out / name
            row: dict = {"arm": arm, "random_state": rs, "n_train": k}

            def show(epoch, total, history, what=name):
                print(f"{what}, epoch {epoch}/{total}: {history.summary()}", flush=True)

            model = WatermarkPredictor(**{**params, "random_state": rs})
            if arm == "position":
                pos = position_lite(args.n_position, random_state=POSITION_SEED)
                n = len(pos)
                model.set_params(max_epochs=args.pretrain_epochs, score_weight=0.0,
                                 level_weight=0.0, content_weight=0.0,
                                 checkpoint_dir=folder / "_pretrain_state")  # fmt: skip
                model.fit(pos.images, scores=np.zeros(n), masks=object_masks(pos),
                          content_types=["logo"] * n,
                          progress=lambda e, t, h, w=f"{name} pretraining": show(e, t, h, w))  # fmt: skip
                row["pretrain"] = {"n_position": n, "max_epochs": args.pretrain_epochs,
                                   "seconds": model.history_.seconds,
                                   "object_iou_held_out": heatmap_iou(model, held_out, held_masks)}  # fmt: skip
                model.set_params(max_epochs=params["max_epochs"], score_weight=1.0,
                                 level_weight=PARAMS.get("level_weight", 0.5),
                                 content_weight=PARAMS.get("content_weight", 0.5),
                                 warm_start=True)  # fmt: skip
            model.set_params(checkpoint_dir=folder / "_state")
            model.fit(part.images, scores=part.scores, masks=part.masks,
                      content_types=part.content_types, progress=show)  # fmt: skip
            model.save(folder)
            row.update({"max_epochs": params["max_epochs"], "seconds": model.history_.seconds,
                        "object_iou_held_out": heatmap_iou(model, held_out, held_masks),
                        "test": _numbers(model, tests)})  # fmt: skip
            done.write_text(json.dumps(row, indent=1) + "\n")
            print(json.dumps(row), flush=True)

    rows = {p.stem: json.loads(p.read_text()) for p in sorted(args.out.glob("*_rs*.json"))}
    record = {"params": params, "train_data": TRAIN_DATA, "order_seed": args.order_seed,
              "fraction": args.fraction, "position_seed": POSITION_SEED,
              "n_position": args.n_position, "pretrain_epochs": args.pretrain_epochs,
              "test_seeds": seeds, "rows": rows}  # fmt: skip
    (args.out / "pretrain_ablation.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
