"""The shipped watermark predictor on one large held-out set: the population behind the claims.

The claims test (tests/watermark/test_watermark_claims.py) reads 300 visible-only images of seed
103, where sampling alone moves exact level accuracy by about +-0.03 (one standard error). This
script evaluates the shipped predictor on many more fresh images of a seed it never saw, with
the model's own read-out (its ``level_readout``), and also reports exact level accuracy under
three read-outs of the same network (the mean of the two heads' scores, binned; the level head's
most probable level; the score head alone, binned), so the choice of read-out can be judged on
data that did not choose it. One torch thread::

    python scripts/watermark_heldout.py --seed 501 --n 3000 [--out docs/results/watermark_heldout.json]
        [--model FOLDER ...]

``--model`` reads a saved predictor instead of the shipped one (repeat it to read several on the
same images; the record then holds one entry per model).

About 3 minutes to generate 3,000 images and 1 minute to predict them on one core.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import torch

from trustlab.watermark.checkpoints import load_checkpoint
from trustlab.watermark.evaluation import evaluate_predictions
from trustlab.watermark.nr import LEVEL_SCORES, WatermarkPredictor
from trustlab.watermark.synth import synthesize
from trustlab.watermark.vocabulary import level_index, level_of_score


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=501)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--model", type=Path, action="append", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)

    data = synthesize(args.n, random_state=args.seed, kinds=("logo", "text", "pattern"))
    records = {}
    for folder in args.model or [None]:
        model = load_checkpoint() if folder is None else WatermarkPredictor.load(folder)
        name = "shipped" if folder is None else str(folder)
        print(f"== {name}")
        records[name] = _read(model, data)
    if args.out is not None:
        record = {"seed": args.seed, "n": args.n, "kinds": ["logo", "text", "pattern"]}
        if args.model is None:
            record.update(records["shipped"])
        else:
            record["models"] = records
        args.out.write_text(json.dumps(record, indent=1) + "\n")


def _read(model, data) -> dict:
    pred = model.predict(data.images)
    evaluation = evaluate_predictions(pred, data)
    print(evaluation.summary())

    truth = np.array([level_index(level_of_score(s)) for s in data.scores])
    probs = np.asarray(pred.level_probabilities)
    expected = probs @ np.asarray(LEVEL_SCORES)
    regressed = np.asarray(pred.regressed_scores)
    mean = np.clip((regressed + expected) / 2, 0.0, 5.0)
    readouts = {
        f"the model's ({model.level_readout})": [level_index(lv) for lv in pred.levels],
        "the mean of the heads, binned": [level_index(level_of_score(s)) for s in mean],
        "the level head's most probable level": probs.argmax(1).tolist(),
        "the score head alone, binned": [level_index(level_of_score(s)) for s in regressed],
    }
    exact = {name: float(np.mean(np.asarray(v) == truth)) for name, v in readouts.items()}
    for name, value in exact.items():
        half = 1.96 * math.sqrt(value * (1 - value) / len(truth))
        print(f"exact level, {name}: {value:.3f} (95 % normal interval +-{half:.3f})")
    return {"evaluation": evaluation.to_dict(), "exact_level_by_readout": exact}


if __name__ == "__main__":
    main()
