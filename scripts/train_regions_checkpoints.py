"""Train the region-sparse checkpoints shipped in ``src/trustlab/explain/regions/checkpoints``.

Runs :func:`trustlab.explain.regions.checkpoints.train_checkpoint` for every entry of
``CHECKPOINTS`` (or those named) with one torch thread and writes each model, its settings, history
and held-out accuracy into the package::

    python scripts/train_regions_checkpoints.py [p2p_dynamic p2p_fixed ...]

An interrupted run resumes (the P2P models checkpoint every epoch). The tests only evaluate these
models; this script is how they were made.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from trustlab.explain.regions.checkpoints import CHECKPOINTS, checkpoint_info, train_checkpoint

ROOT = Path(__file__).resolve().parents[1] / "src/trustlab/explain/regions/checkpoints"


def main() -> None:
    torch.set_num_threads(1)
    names = sys.argv[1:] or list(CHECKPOINTS)
    for name in names:

        def show(epoch, total, history, name=name):
            if isinstance(history, dict):  # BlackBoxClassifier
                print(f"{name}: epoch {epoch}/{total} loss {history['loss'][-1]:.4f} "
                      f"accuracy {history['accuracy'][-1]:.3f}", flush=True)  # fmt: skip
            else:
                print(f"{name}: epoch {epoch}/{total} loss {history.loss[-1]:.4f} accuracy "
                      f"{history.accuracy[-1]:.3f} kept {history.expected_kept[-1]:.3f}",
                      flush=True)  # fmt: skip

        train_checkpoint(name, ROOT / name, progress=show, cache_dir=Path("/tmp/regions_segcache"))
        print(name, "held-out accuracy", checkpoint_info(name)["test_accuracy"], flush=True)


if __name__ == "__main__":
    main()
