"""Evaluate EquiGX and the baselines on graphs with ground-truth nodes (spec 10, checks 5-6).

:func:`evaluate_explanations` explains each test graph's true class with every method and reports

- **ground truth**: per-graph node ROC-AUC and average precision of the scores against the
  ground-truth nodes (the shape; the carbonyl C and O), averaged over the correctly classified
  graphs whose mask has both kinds of node, with percentile-bootstrap intervals over graphs
  (each method resamples from its own stream of the seed and its name, so its interval does not
  depend on the other methods evaluated or their order);
- **fidelity**: accuracy after deleting the top ``fraction`` of nodes by each method (the nodes are
  removed from the point cloud, so they neither carry features nor shape their neighbours'
  geometry), against deleting the same number of random nodes (mean of ``n_random`` draws); the
  *fidelity gap* is how much more the method's deletion drops accuracy than random deletion
  (the ``random`` method's deletion is that control itself: its gap is None, not a measured 0);
- **angular orders**: accuracy with each order l of the spherical harmonics and hidden features
  zeroed (``mask_order``), and EquiGX's relevance split into input features, edge distances and
  edge directions per order l.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    check_positive_int,
    check_probability,
    check_random_state,
    repeated,
)
from trustlab._lazy import require
from trustlab._numerics import auroc_rows
from trustlab._progress import check_progress
from trustlab._results import Result, internal_field
from trustlab.errors import InputError

torch = require("torch", "graph")

from trustlab.explain.equigx.baselines import BASELINES, baseline_scores  # noqa: E402
from trustlab.explain.equigx.data import Graph, GraphDataset  # noqa: E402
from trustlab.explain.equigx.model import TensorFieldNetwork  # noqa: E402
from trustlab.explain.equigx.relevance import EquiGX  # noqa: E402
from trustlab.explain.equigx.training import predict_graphs  # noqa: E402

__all__ = ["METHODS", "ExplanationEvaluation", "evaluate_explanations"]

#: EquiGX (the paper's componentwise rules from the target logit), its block variant and its
#: contrast output (both trustlab extensions), and the baselines.
METHODS = ("equigx", "equigx_block", "equigx_contrast", *BASELINES)


def _auroc(mask: np.ndarray, score: np.ndarray) -> float:
    """Node ROC-AUC of one graph: the Mann-Whitney U of the ground-truth nodes' scores over
    (positives x negatives), ties counted half (average ranks). Equal to sklearn's
    ``roc_auc_score`` (the tests' oracle) at a small part of its cost per graph; sklearn's own
    answer where it is undefined (one kind of node: NaN and a warning; scores not finite: an
    error)."""
    mask = np.asarray(mask, dtype=bool)
    score = np.asarray(score, dtype=float)
    n_pos = int(mask.sum())
    n_neg = mask.size - n_pos
    if n_pos == 0 or n_neg == 0 or not np.isfinite(score).all():
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(mask, score))
    return float(auroc_rows(mask, score[None, :])[0])


def _ap(mask: np.ndarray, score: np.ndarray) -> float:
    """Node average precision of one graph: sklearn's ``average_precision_score`` (the step
    integral of its precision-recall curve over the distinct score thresholds, taken in
    descending order) in the same float operations, at a small part of its cost per graph;
    sklearn's own answer where it is undefined or refuses (one kind of node, scores not finite)."""
    mask = np.asarray(mask, dtype=bool)
    score = np.asarray(score, dtype=float)
    n_pos = int(mask.sum())
    if n_pos == 0 or n_pos == mask.size or mask.ndim != 1 or not np.isfinite(score).all():
        from sklearn.metrics import average_precision_score

        return float(average_precision_score(mask, score))
    order = np.argsort(-score, kind="stable")
    ranked = score[order]
    last = np.append(np.nonzero(np.diff(ranked))[0], ranked.size - 1)  # end of each threshold
    tps = np.cumsum(mask[order].astype(np.float64))[last]
    fps = 1 + last.astype(np.float64) - tps
    precision = np.append((tps / (tps + fps))[::-1], 1.0)
    recall = np.append((tps / tps[-1])[::-1], 0.0)
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def _interval(values: np.ndarray, rng: np.random.Generator, level: float) -> dict[str, Any]:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return {"estimate": None, "low": None, "high": None, "n": 0}
    draws = rng.integers(0, values.size, size=(1000, values.size))
    means = values[draws].mean(1)
    a = (1 - level) / 2
    return {
        "estimate": float(values.mean()),
        "low": float(np.quantile(means, a)),
        "high": float(np.quantile(means, 1 - a)),
        "n": int(values.size),
    }


def _method_stream(seed: int, method: str) -> np.random.Generator:
    """The bootstrap draws of one method: a stream of its own, seeded by the evaluation's seed and
    the method's name (CRC-32, the same in every process, unlike ``hash``), so a method's
    intervals do not depend on which other methods are evaluated, nor on their order."""
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(method.encode())]))


def _n_deleted(fraction: float, n_nodes: int) -> int:
    """How many of a graph's nodes the fidelity deletes: ``fraction`` of them, rounded up."""
    return int(np.ceil(fraction * n_nodes))


def _delete(graph: Graph, nodes: np.ndarray) -> Graph:
    keep = np.ones(graph.n_nodes, dtype=bool)
    keep[nodes] = False
    return Graph(
        pos=graph.pos[keep], x=graph.x[keep], label=graph.label, node_mask=graph.node_mask[keep]
    )


@dataclass(frozen=True)
class ExplanationEvaluation(Result):
    """Ground-truth agreement, fidelity and angular-order ablation of node explanations.

    ``auroc`` / ``average_precision``: per method, ``{"estimate", "low", "high", "n"}`` over
    graphs; ``accuracy_after_deletion``: per method, the accuracy once its top ``fraction`` nodes
    are deleted (``"random"``: mean over random draws, the control); ``fidelity_gap``: per method,
    accuracy after random deletion minus accuracy after the method's deletion (None for
    ``"random"``: it is the control, so its gap would be 0 by construction); ``order_accuracy``: per
    order l, accuracy with l zeroed; ``relevance_parts``: EquiGX's mean relevance on input
    features, edge distances and edge directions per order l (they sum to 1; graphs
    whose network output is 0 are left out);
    ``seconds_per_graph``: per method.
    """

    dataset: str
    n_graphs: int
    n_explained: int
    accuracy: float
    methods: tuple[str, ...]
    fraction: float
    confidence_level: float
    auroc: dict
    average_precision: dict
    accuracy_after_deletion: dict
    fidelity_gap: dict
    order_accuracy: dict
    relevance_parts: dict
    seconds_per_graph: dict
    random_state: Any = None
    per_graph_auroc: dict = internal_field(default_factory=dict)
    examples: tuple = internal_field(default=())
    figure_name = "equigx_evaluation.png"

    def summary(self) -> str:
        lines = [
            f"Explanations on {self.dataset}: {_graphs(self.n_graphs)}, accuracy "
            f"{self.accuracy:.3f}; {self.n_explained} correctly classified "
            f"{_graphs(self.n_explained).split()[1]} with ground truth explained",
            f"  {'method':<22}{'AUROC':>8}{'AP':>8}{'acc. after top ' + _pct(self.fraction):>22}"
            f"{'gap':>8}",
        ]
        for m in self.methods:
            a, p = self.auroc[m]["estimate"], self.average_precision[m]["estimate"]
            # the random method's deletion is the control: no gap to report
            gap = "control" if m == "random" else _f(self.fidelity_gap.get(m))
            lines.append(
                f"  {m:<22}{_f(a):>8}{_f(p):>8}"
                f"{_f(self.accuracy_after_deletion.get(m)):>22}{gap:>8}"
            )
        lines.append(
            f"  random deletion of {_pct(self.fraction)}: accuracy "
            f"{_f(self.accuracy_after_deletion.get('random'))}"
        )
        orders = ", ".join(f"l={k}: {_f(v)}" for k, v in self.order_accuracy.items())
        lines.append(f"  accuracy with one angular order zeroed: {orders}")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Mean node AUROC per method with its interval (left) and the accuracy after deleting
        each method's top nodes against random deletion (right)."""
        import matplotlib.pyplot as plt

        if ax is None:
            fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        else:
            fig = ax.figure
            spec = ax.get_subplotspec()
            ax.remove()
            sub = spec.subgridspec(1, 2, wspace=0.35)
            axes = [fig.add_subplot(sub[0]), fig.add_subplot(sub[1])]
        names = list(self.methods)
        # an AUROC of 0 is a value (every ground-truth node ranked last), None means no graph
        est = [_or(self.auroc[m]["estimate"], np.nan) for m in names]
        lo = [e - _or(self.auroc[m]["low"], e) for m, e in zip(names, est, strict=True)]
        hi = [_or(self.auroc[m]["high"], e) - e for m, e in zip(names, est, strict=True)]
        colours = ["tab:red" if m.startswith("equigx") else "tab:gray" for m in names]
        axes[0].barh(names, est, xerr=[lo, hi], color=colours)
        axes[0].axvline(0.5, color="k", lw=0.8, ls=":")
        axes[0].set_xlim(0, 1)
        axes[0].invert_yaxis()
        axes[0].set_xlabel("node AUROC against the ground truth")
        acc = [self.accuracy_after_deletion.get(m, np.nan) for m in names]
        axes[1].barh(names, acc, color=colours)
        axes[1].set_yticks(range(len(names)), [""] * len(names))  # the same rows as on the left
        axes[1].axvline(self.accuracy_after_deletion.get("random", np.nan), color="k", ls="--",
                        label="random deletion")  # fmt: skip
        axes[1].axvline(self.accuracy, color="tab:green", ls=":", label="no deletion")
        axes[1].set_xlim(0, 1.02)
        axes[1].invert_yaxis()
        axes[1].set_xlabel(f"accuracy after deleting the top {_pct(self.fraction)} nodes")
        axes[1].legend(loc="lower right", fontsize=8)
        axes[0].set_title(self.dataset)
        return axes[0]


def _graphs(n: int) -> str:
    return "1 graph" if n == 1 else f"{n} graphs"


def _or(v: Any, default: float) -> float:
    return default if v is None else v


def _f(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.3f}"


def _pct(v: float) -> str:
    return f"{v:.0%}"


def _order_parts(ex: Any, sh_irreps: Any) -> dict[str, float]:
    parts = {
        "input features": float(ex.feature_relevance.sum()),
        "edge distance": float(ex.edge_distance.sum()),
    }
    start = 0
    for _, ir in sh_irreps:
        stop = start + ir.dim
        key = f"edge direction l={ir.l}"
        parts[key] = parts.get(key, 0.0) + float(ex.edge_direction_components[:, start:stop].sum())
        start = stop
    return parts


def evaluate_explanations(
    model: TensorFieldNetwork,
    dataset: GraphDataset,
    *,
    methods: Sequence[str] = METHODS,
    max_graphs: int | None = 100,
    fraction: float = 0.2,
    n_random: int = 5,
    confidence_level: float = 0.95,
    n_steps: int = 50,
    random_state: Any = 0,
    progress: Callable[[int, int], None] | None = None,
) -> ExplanationEvaluation:
    """Score node explanations of ``model`` on ``dataset`` (see the module docstring).

    Parameters
    ----------
    model : TensorFieldNetwork
        A trained network.
    dataset : GraphDataset
        Test graphs with ground-truth ``node_mask``; the first ``max_graphs`` are used.
    methods : sequence of str
        From :data:`METHODS`.
    fraction : float in (0, 1)
        Share of each graph's nodes deleted for fidelity (rounded up).
    n_random : int
        Random deletions averaged for the control.
    n_steps : int
        Integrated-gradients steps.
    progress : callable, optional
        Called as ``progress(done, total)`` after each graph.

    Returns
    -------
    ExplanationEvaluation

    Examples
    --------
    >>> import torch
    >>> from trustlab.explain.equigx import TensorFieldNetwork, shapes_in_noise
    >>> torch.manual_seed(0) and None
    >>> data = shapes_in_noise(6, variant="same_count", n_nodes=10, random_state=0)
    >>> net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, k=4, radius=2.0)
    >>> ev = evaluate_explanations(net, data, methods=["equigx", "random"], n_random=1)
    >>> sorted(ev.auroc)
    ['equigx', 'random']
    """
    check_progress(progress)  # before any graph is scored, not after the first
    if not isinstance(model, TensorFieldNetwork):
        raise InputError.bad("model", "a trained trustlab TensorFieldNetwork", model)
    if not isinstance(dataset, GraphDataset) or len(dataset) == 0:
        raise InputError.bad("dataset", "a non-empty GraphDataset", dataset)
    if dataset.n_classes != model.config.n_classes:
        raise InputError.bad(
            "dataset", f"{model.config.n_classes} classes (the model's)", dataset.n_classes
        )
    if dataset[0].x.shape[1] != model.config.n_scalars:
        raise InputError.bad(
            "dataset", f"{model.config.n_scalars} node features (the model's)",
            dataset[0].x.shape[1],
        )  # fmt: skip
    if isinstance(methods, str):
        methods = [methods]
    methods = tuple(methods)
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise InputError.bad("methods", f"a non-empty selection of {METHODS}", methods)
    twice = repeated(methods)
    if twice:  # a baseline's scores would be collected twice per graph
        raise InputError.bad("methods", "each method once", f"{', '.join(twice)} repeated")
    fraction = check_probability(fraction, "fraction")  # numpy floats too
    confidence_level = check_probability(confidence_level, "confidence_level")
    n_random = check_positive_int(n_random, "n_random")
    n_steps = check_positive_int(n_steps, "n_steps")
    if max_graphs is not None:
        max_graphs = check_positive_int(max_graphs, "max_graphs")
        dataset = dataset.subset(np.arange(min(max_graphs, len(dataset))))
    rng = check_random_state(random_state)
    seed = int(rng.integers(2**31))
    graphs = list(dataset)
    smallest = min(g.n_nodes for g in graphs)
    if smallest == 1:  # no share deletes a node and leaves one
        one = next(i for i, g in enumerate(graphs) if g.n_nodes == 1)
        raise InputError.bad(
            "dataset", "graphs of at least 2 nodes (fidelity deletes some and keeps some)",
            f"graph {one} with 1 node",
        )  # fmt: skip
    if _n_deleted(fraction, smallest) >= smallest:  # nothing left to predict from
        raise InputError.bad(
            "fraction", f"a share that leaves a node of every graph (the smallest has {smallest} "
            f"nodes: below {(smallest - 1) / smallest:.3g})", fraction,
        )  # fmt: skip
    labels = dataset.labels
    pred = predict_graphs(model, graphs).argmax(1)
    correct = pred == labels
    explainers = {
        "equigx": EquiGX(model),
        "equigx_block": EquiGX(model, variant="block"),
        "equigx_contrast": EquiGX(model, output="contrast"),
    }
    scores: dict[str, list[np.ndarray]] = {m: [] for m in methods}
    seconds = {m: 0.0 for m in methods}
    parts: list[dict[str, float]] = []
    examples = []
    # EquiGX explains the graphs in batches (one backward pass per batch)
    for m in methods:
        if m not in explainers:
            continue
        t0 = time.perf_counter()
        batch = explainers[m].explain_many(graphs, [int(g.label) for g in graphs])
        seconds[m] += time.perf_counter() - t0
        scores[m] = [ex.node_relevance for ex in batch]
        if m == "equigx":
            # a graph whose output is 0 (no edge carries a message) has no relevance to split
            parts = [_order_parts(ex, model.sh_irreps) for ex in batch if np.any(ex.logits)]
            examples = [
                ex for i, ex in enumerate(batch) if correct[i] and graphs[i].node_mask.any()
            ][:3]
    for i, g in enumerate(graphs):
        for m in methods:
            if m in explainers:
                continue
            t0 = time.perf_counter()
            s = baseline_scores(
                model, g, m, target=int(g.label), n_steps=n_steps, random_state=seed + i
            )
            seconds[m] += time.perf_counter() - t0
            scores[m].append(np.asarray(s, dtype=float))
        if progress is not None:
            progress(i + 1, len(graphs))
    # ground truth, on correctly classified graphs whose mask has both kinds of node
    usable = [i for i, g in enumerate(graphs) if correct[i] and 0 < g.node_mask.sum() < g.n_nodes]
    auroc, ap, per_graph = {}, {}, {}
    for m in methods:
        boot = _method_stream(seed, m)  # its own draws: the same whatever else is evaluated
        a = np.array([_auroc(graphs[i].node_mask, scores[m][i]) for i in usable])
        p = np.array([_ap(graphs[i].node_mask, scores[m][i]) for i in usable])
        per_graph[m] = a
        auroc[m] = _interval(a, boot, confidence_level)
        ap[m] = _interval(p, boot, confidence_level)
    # fidelity: delete the top nodes by each method, or random ones
    after: dict[str, float] = {}
    for m in methods:
        cut = []
        for g, s in zip(graphs, scores[m], strict=True):
            k = _n_deleted(fraction, g.n_nodes)
            cut.append(_delete(g, np.argsort(-s, kind="stable")[:k]))
        after[m] = float(np.mean(predict_graphs(model, cut).argmax(1) == labels))
    draws = np.random.default_rng(seed + 1)
    rand = []
    for _ in range(n_random):
        cut = [
            _delete(g, draws.permutation(g.n_nodes)[: _n_deleted(fraction, g.n_nodes)])
            for g in graphs
        ]
        rand.append(float(np.mean(predict_graphs(model, cut).argmax(1) == labels)))
    after["random"] = float(np.mean(rand))
    # the random method's deletion is replaced by the control above: its gap is 0 by construction
    gap = {m: None if m == "random" else after["random"] - after[m] for m in methods}
    # angular orders
    order_acc = {
        ell: float(np.mean(predict_graphs(model, graphs, mask_order=[ell]).argmax(1) == labels))
        for ell in range(model.config.l_max + 1)
    }
    relevance_parts = {k: float(np.mean([p[k] for p in parts])) for k in parts[0]} if parts else {}
    return ExplanationEvaluation(
        dataset=dataset.name,
        n_graphs=len(graphs),
        n_explained=len(usable),
        accuracy=float(correct.mean()),
        methods=methods,
        fraction=float(fraction),
        confidence_level=float(confidence_level),
        auroc=auroc,
        average_precision=ap,
        accuracy_after_deletion=after,
        fidelity_gap=gap,
        order_accuracy=order_acc,
        relevance_parts=relevance_parts,
        seconds_per_graph={m: seconds[m] / len(graphs) for m in methods},
        random_state=random_state if isinstance(random_state, (int, type(None))) else None,
        per_graph_auroc=per_graph,
        examples=tuple(examples),
    )
