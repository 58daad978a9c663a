"""docs/interpret-sae.md: its Python example runs and prints the fit's summary."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "interpret-sae.md"


def test_the_python_example_runs(capsys):
    import torch

    torch.set_num_threads(1)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(PAGE), "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("k=4 SAE 16 -> 64 latents: held-out FVU")
