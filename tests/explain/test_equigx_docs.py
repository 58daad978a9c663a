"""docs/explain-equigx.md: its Python example runs and prints what its comments say, and the
edge-distance total it calls fixed by the equal thirds is sum_{k=1..L} 3^-k on any graph."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from trustlab.explain.equigx import EquiGX, PointGraph  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "explain-equigx.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_example_prints_what_its_comments_say(tmp_path, monkeypatch, capsys):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[0], "explain-equigx.md example 1", "exec"), {})
    out = capsys.readouterr().out
    assert "top nodes: 2 (" in out and ", 3 (" in out.split("top nodes:")[1].split("\n")[0]
    assert "[3 2]" in out  # the edge whose length carries the most relevance: the C=O bond
    assert (tmp_path / "molecule.html").is_file()


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_the_distance_total_is_fixed_by_the_equal_thirds(n_layers):
    torch.manual_seed(n_layers)
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, n_layers=n_layers, k=4,
                             dtype="float64")  # fmt: skip
    expected = sum(3.0**-k for k in range(1, n_layers + 1))
    assert f"{4 / 9:.3f}" == "0.444" and "4/9" in PAGE.read_text()
    rng = np.random.default_rng(n_layers)
    for kwargs in ({}, {"variant": "block"}, {"output": "contrast"}, {"norm_rule": "identity"}):
        g = PointGraph(pos=rng.normal(size=(7, 3)), x=np.ones((7, 1)))
        ex = EquiGX(net, **kwargs).explain(g)
        assert abs(ex.edge_distance.sum() - expected) < 1e-6, kwargs
        layers = sum(d.sum() for d in ex.layer_direction)
        assert abs(layers - expected) < 1e-6, kwargs
