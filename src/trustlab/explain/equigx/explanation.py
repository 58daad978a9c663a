"""The result of an EquiGX explanation: :class:`GraphExplanation` (node, feature, edge-direction and
edge-distance relevance, per layer too), with its 3-D plot and interactive view."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._results import Result, internal_field

__all__ = ["GraphExplanation"]

#: Why an explanation is all zero (its warning and its summary say it).
ZERO_OUTPUT = (
    "the network's output is 0 for every class: no edge carries a message (every neighbour "
    "beyond the radial cut-off or at distance 0, or one node), so every relevance is 0 and the "
    "target is arbitrary"
)


def _count(n: int, noun: str) -> str:
    """``'1 node'``, ``'3 nodes'``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True)
class GraphExplanation(Result):
    """EquiGX relevance of one graph.

    ``node_relevance`` (n,) is rule 7's node importance; ``feature_relevance`` (n, f) the
    relevance of the scalar inputs; ``edge_direction_components`` (E, sh_dim) the direction
    relevance per spherical-harmonic component (all layers and the input embedding),
    ``edge_direction`` its sum per edge, ``edge_distance`` (E,) the radial-weight relevance
    (all layers); ``layer_node`` / ``layer_direction`` / ``layer_distance`` the same per
    convolution (input-node relevance R_x, R_Y summed per edge, R_w), first layer first;
    ``layer_node_components`` / ``layer_direction_components`` keep the per-component arrays;
    ``kappa`` the released rule's per-layer factors; ``total`` the sum of all input relevance
    (1 up to the stabiliser).
    """

    target: int
    total: float
    norm_rule: str
    variant: str
    method: str
    output: str
    logits: np.ndarray
    node_relevance: np.ndarray
    feature_relevance: np.ndarray
    edge_index: np.ndarray
    edge_direction: np.ndarray
    edge_distance: np.ndarray
    positions: np.ndarray
    edge_direction_components: np.ndarray = internal_field()
    embedding_direction: np.ndarray = internal_field()
    layer_node: tuple = internal_field()
    layer_direction: tuple = internal_field()
    layer_distance: tuple = internal_field()
    layer_node_components: tuple = internal_field()
    layer_direction_components: tuple = internal_field()
    kappa: tuple = ()

    _dict_extras = ("layer_totals",)
    figure_name = "equigx.png"

    @property
    def layer_totals(self) -> list[dict[str, float]]:
        """Per convolution: the summed input-node, direction and distance relevance."""
        return [
            {"node": float(a.sum()), "direction": float(b.sum()), "distance": float(c.sum())}
            for a, b, c in zip(
                self.layer_node, self.layer_direction, self.layer_distance, strict=True
            )
        ]

    def summary(self) -> str:
        top = np.argsort(-self.node_relevance)[:5]
        lines = [
            f"EquiGX ({self.method}, {self.variant}, NormActivation rule {self.norm_rule}, "
            f"explaining the {self.output})",
            f"  target class {self.target}; {_count(len(self.node_relevance), 'node')}, "
            f"{_count(self.edge_index.shape[1], 'edge')}; total relevance {self.total:.6g}",
            f"  inputs {self.feature_relevance.sum():.4g}, edge directions "
            f"{self.edge_direction.sum():.4g}, edge distances {self.edge_distance.sum():.4g}",
            "  top nodes: " + ", ".join(f"{i} ({self.node_relevance[i]:.3g})" for i in top),
        ]
        if not np.any(self.logits):
            lines.append(f"  {ZERO_OUTPUT}")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The nodes in 3-D, sized and coloured by relevance, edges drawn by relevance."""
        if ax is None:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(6.4, 5.2))
            ax = fig.add_subplot(projection="3d")
        elif getattr(ax, "name", "") != "3d":  # a flat Axes is replaced by a 3-D one in place
            fig, spec = ax.figure, ax.get_subplotspec()
            ax.remove()
            ax = fig.add_subplot(spec, projection="3d")
        p, r = self.positions, self.node_relevance
        scale = max(float(np.abs(r).max()), 1e-300)
        e = self.edge_direction + self.edge_distance
        escale = max(float(np.abs(e).max()) if e.size else 0.0, 1e-300)
        for k, (s, d) in enumerate(self.edge_index.T):
            a = min(1.0, abs(e[k]) / escale)
            ax.plot(
                *zip(p[s], p[d], strict=True),
                color="tab:red" if e[k] > 0 else "tab:blue",
                alpha=a,
                lw=1,
            )
        sc = ax.scatter(
            *p.T, c=r, cmap="coolwarm", vmin=-scale, vmax=scale, s=20 + 200 * np.abs(r) / scale
        )
        ax.figure.colorbar(sc, ax=ax, shrink=0.7, label="node relevance")
        ax.set_title(f"EquiGX relevance, class {self.target}")
        return ax

    def to_html(self, path: str | Any, *, title: str | None = None) -> Any:
        """Write an interactive 3-D view (rotate, zoom, hover for each node's relevance) as one
        self-contained HTML file (plotly, with its script inlined); returns the path.

        Nodes are coloured and sized by relevance; each edge is drawn with an opacity proportional
        to its relevance (direction + distance), red for positive and blue for negative.
        """
        from trustlab.explain.equigx.view import explanation_html

        return explanation_html(self, path, title=title)
