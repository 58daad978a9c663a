"""A tiny watermark predictor trained at one torch thread and saved, for the tests that need a
``--model`` folder (one epoch on a few synthetic images: seconds)."""

from __future__ import annotations

from pathlib import Path


def tiny_predictor(folder: Path, n: int, random_state: int) -> Path:
    """Train on ``synthesize(n, random_state)`` and save into ``folder``; return it."""
    import torch

    from trustlab.watermark import WatermarkPredictor, synthesize

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ds = synthesize(n, random_state=random_state)
        model = WatermarkPredictor(input_size=64, widths=(4, 8, 8, 8), max_epochs=1).fit(
            ds.images, scores=ds.scores, masks=ds.masks, content_types=ds.content_types
        )
        model.save(folder)
    finally:
        torch.set_num_threads(old)
    return folder
