"""An interactive 3-D view of a :class:`~trustlab.explain.equigx.GraphExplanation`: one
self-contained HTML file (plotly, its script inlined), rotatable, with each node's relevance on
hover. Nodes are coloured and sized by relevance; each edge is drawn with an opacity proportional to
its relevance (direction + distance), red for positive and blue for negative."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._lazy import require
from trustlab._results import write_atomic
from trustlab.errors import InputError

__all__ = ["explanation_html"]


def explanation_html(ex: Any, path: str | Any, *, title: str | None = None) -> Path:
    """Write the view of explanation ``ex`` to ``path``; return the path."""
    out = _html_path(path)  # before the figure is built
    go = require("plotly.graph_objects", "graph")
    p, r = ex.positions, ex.node_relevance
    e = ex.edge_direction + ex.edge_distance
    escale = max(float(np.abs(e).max()) if e.size else 0.0, 1e-300)
    scale = max(float(np.abs(r).max()), 1e-300)
    traces = []
    for sign, colour in ((1, "crimson"), (-1, "royalblue")):
        for level in (0.25, 0.5, 0.75, 1.0):  # a few opacity bands keep the file small
            sel = [
                k for k in range(e.size)
                if np.sign(e[k]) == sign and level - 0.25 < abs(e[k]) / escale <= level
            ]  # fmt: skip
            if not sel:
                continue
            xs, ys, zs = [], [], []
            for k in sel:
                s_, d_ = ex.edge_index[:, k]
                xs += [p[s_, 0], p[d_, 0], None]
                ys += [p[s_, 1], p[d_, 1], None]
                zs += [p[s_, 2], p[d_, 2], None]
            traces.append(
                go.Scatter3d(
                    x=xs, y=ys, z=zs, mode="lines", opacity=level, hoverinfo="skip",
                    line={"color": colour, "width": 3}, showlegend=False,
                )
            )  # fmt: skip
    traces.append(
        go.Scatter3d(
            x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="markers",
            marker={"size": 4 + 12 * np.abs(r) / scale, "color": r, "colorscale": "RdBu",
                    "reversescale": True, "cmin": -scale, "cmax": scale,
                    "colorbar": {"title": "relevance"}},
            text=[f"node {i}: {v:.4g}" for i, v in enumerate(r)], hoverinfo="text",
            showlegend=False,
        )
    )  # fmt: skip
    fig = go.Figure(traces)
    fig.update_layout(
        title=title or f"EquiGX relevance, class {ex.target} ({ex.output})",
        scene={"aspectmode": "data"},
        margin={"l": 0, "r": 0, "t": 40, "b": 0},
    )
    # one self-contained page, written whole (an interrupted write leaves no half page)
    return write_atomic(out, fig.to_html(include_plotlyjs=True, full_html=True))


def _html_path(path: Any) -> Path:
    """``path`` as the file to write, its folder made; an InputError naming ``path`` where it is
    no path, empty, a folder, or under a file (not the OSError of the write)."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise InputError.bad("path", "a file path (str or os.PathLike) for the HTML view", path)
    out = Path(path)
    if out.is_dir():
        raise InputError.bad("path", "a file path for the HTML view, not a folder", str(out))
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError.bad(
            "path", "a file path in a folder that exists or can be created", str(out)
        ) from exc
    return out
