"""Train the no-reference watermark predictor shipped in ``src/trustlab/watermark/checkpoints``.

Runs :func:`trustlab.watermark.checkpoints.train_checkpoint` with one torch thread and writes the
model, its settings, history and held-out numbers into the package::

    python scripts/train_watermark_checkpoint.py

An interrupted run resumes (the fit checkpoints every epoch). The tests only evaluate this model;
this script is how it was made.
"""

from __future__ import annotations

from pathlib import Path

import torch

from trustlab.watermark.checkpoints import CHECKPOINT, checkpoint_info, train_checkpoint

ROOT = Path(__file__).resolve().parents[1] / "src/trustlab/watermark/checkpoints"


def main() -> None:
    torch.set_num_threads(1)

    def show(epoch, total, history):
        print(f"epoch {epoch}/{total}: {history.summary()}", flush=True)

    train_checkpoint(ROOT / CHECKPOINT, progress=show)
    print(checkpoint_info()["test_evaluation"], flush=True)


if __name__ == "__main__":
    main()
