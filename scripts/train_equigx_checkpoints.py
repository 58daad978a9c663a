"""Train the EquiGX checkpoints shipped in ``src/trustlab/explain/equigx/checkpoints``.

Runs :func:`trustlab.explain.equigx.checkpoints.train_checkpoint` for every entry of ``CHECKPOINTS``
(or those named) with one torch thread and writes each network, its settings, history and test
accuracy into the package::

    python scripts/train_equigx_checkpoints.py [shapes_platonic qm9_carbonyl]

The tests only evaluate these networks; this script is how they were made.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from trustlab.explain.equigx.checkpoints import CHECKPOINTS, train_checkpoint

ROOT = Path(__file__).resolve().parents[1] / "src/trustlab/explain/equigx/checkpoints"


def main() -> None:
    torch.set_num_threads(1)
    names = sys.argv[1:] or list(CHECKPOINTS)
    for name in names:

        def show(epoch, total, loss, acc, val, name=name):
            print(f"{name}: epoch {epoch}/{total} loss {loss:.4f} train {acc:.3f} val {val:.3f}",
                  flush=True)  # fmt: skip

        history = train_checkpoint(name, ROOT / name, progress=show)
        print(history.summary(), flush=True)


if __name__ == "__main__":
    main()
