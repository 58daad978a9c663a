"""Train the no-reference watermark predictor shipped in ``src/trustlab/watermark/checkpoints``.

Runs :func:`trustlab.watermark.checkpoints.train_checkpoint` and writes the model, its settings,
history and held-out numbers into the package::

    python scripts/train_watermark_checkpoint.py [--device cuda]

The recipe generates 12,000 images (8.1 GB in memory, about 16 GB with training) and trains
25 epochs on them: about 6 minutes on an H200 (the shipped model was made there by
``scripts/watermark_more_data.py``, whose run this recipe repeats), about 3.5 hours on one CPU
core. An interrupted run resumes (the fit checkpoints every epoch). ``--record-only``
re-evaluates the model in the package and rewrites only its ``training.json``. The tests only
evaluate this model; this script is how it was made.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from trustlab.watermark.checkpoints import (
    CHECKPOINT,
    checkpoint_info,
    load_checkpoint,
    train_checkpoint,
    write_training_record,
)

ROOT = Path(__file__).resolve().parents[1] / "src/trustlab/watermark/checkpoints"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--record-only", action="store_true")
    parser.add_argument("--jobs", type=int, default=-1, help="processes generating the images")
    args = parser.parse_args()
    torch.set_num_threads(1)

    def show(epoch, total, history):
        print(f"epoch {epoch}/{total}: {history.summary()}", flush=True)

    if args.record_only:
        write_training_record(load_checkpoint(), ROOT / CHECKPOINT)
    else:
        train_checkpoint(ROOT / CHECKPOINT, progress=show, device=args.device, n_jobs=args.jobs)
    print(checkpoint_info()["test_evaluation"], flush=True)


if __name__ == "__main__":
    main()
