"""The shipped watermark predictor on many held-out seeds (docs/watermark.md's tables).

Reads 300 fresh visible-only images of each seed with the shipped model under several read-outs
of the same network, and with the previous 3,000-image model (``docs/results/watermark_3000``)
as the control of the training data; seed 104's 60 images of logos, dwtDctSvd marks and 30 %
clean images give the invisible marks' detection AUROC. One torch thread, about 10 minutes::

    python scripts/watermark_seeds.py [--seeds 103,102,105,106,107,11,12,13,14,15,16]
        [--out docs/results/watermark_seeds.json]

Read-outs: ``shipped`` (flip averaging, the level head's most probable level), ``score level``
(the level of the mean score, the previous default), ``one view`` (no flip averaging),
``one view, score head`` (no flip averaging, the score head alone: the first release's read-out).
The global-statistics control of seed 103 learns from the first 300 training images.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
from pathlib import Path

import torch

from trustlab.watermark.checkpoints import checkpoint_data, load_checkpoint
from trustlab.watermark.evaluation import evaluate_predictions
from trustlab.watermark.nr import WatermarkPredictor
from trustlab.watermark.synth import synthesize
from trustlab.watermark.vocabulary import level_of_score

ROOT = Path(__file__).resolve().parents[1]
VISIBLE = ("logo", "text", "pattern")
KEEP = ("visibility", "location", "content_type_accuracy", "per_kind", "controls")


def _numbers(evaluation) -> dict:
    d = evaluation.to_dict()
    return {k: d[k] for k in KEEP if k in d}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="103,102,105,106,107,11,12,13,14,15,16")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/watermark_seeds.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    shipped = load_checkpoint()
    score_level = copy.deepcopy(shipped).set_params(level_readout="score")
    previous = WatermarkPredictor.load(ROOT / "docs/results/watermark_3000")
    control_train = checkpoint_data("train", n=300)
    record = {"note": __doc__.split("\n\n")[0], "seeds": {}}
    for seed in (int(s) for s in args.seeds.split(",")):
        data = synthesize(300, random_state=seed, kinds=VISIBLE)
        train = control_train if seed == 103 else None
        one = shipped.predict(data.images, flip_average=False)
        head = dataclasses.replace(
            one,
            scores=one.regressed_scores,
            levels=tuple(level_of_score(s) for s in one.regressed_scores),
        )
        row = {
            "shipped": _numbers(
                evaluate_predictions(shipped.predict(data.images), data, train=train)
            ),
            "score level": _numbers(evaluate_predictions(score_level.predict(data.images), data)),
            "one view": _numbers(evaluate_predictions(one, data)),
            "one view, score head": _numbers(evaluate_predictions(head, data)),
            "previous model": _numbers(evaluate_predictions(previous.predict(data.images), data)),
        }
        record["seeds"][str(seed)] = row
        v = row["shipped"]["visibility"]
        print(seed, {k: round(v[k], 3) for k in ("srcc", "exact_level_accuracy")}, flush=True)
    inv = synthesize(60, random_state=104, kinds=("logo", "dwtDctSvd"), clean_fraction=0.3)
    record["invisible_seed_104"] = {
        "shipped": evaluate_predictions(shipped.predict(inv.images), inv).invisible_auroc,
        "previous model": evaluate_predictions(previous.predict(inv.images), inv).invisible_auroc,
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
