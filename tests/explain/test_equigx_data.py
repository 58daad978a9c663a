"""Tests of trustlab.explain.equigx.data: shapes-in-noise generator and the QM9 carbonyl subset."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.explain.equigx.data import (
    CARBONYL_MAX_DISTANCE,
    QM9_ELEMENTS,
    SHAPE_VARIANTS,
    GraphDataset,
    _random_rotation,
    qm9_carbonyl,
    qm9_carbonyl_info,
    shape_edges,
    shape_vertices,
    shapes_in_noise,
)

PHI = (1 + math.sqrt(5)) / 2
# Independent facts: vertices, edges, degree and circumradius of each solid with unit edge.
SOLIDS = {
    "tetrahedron": (4, 6, 3, math.sqrt(6) / 4),
    "octahedron": (6, 12, 4, math.sqrt(2) / 2),
    "cube": (8, 12, 3, math.sqrt(3) / 2),
    "icosahedron": (12, 30, 5, math.sqrt(PHI * math.sqrt(5)) / 2),
    "dodecahedron": (20, 30, 3, math.sqrt(3) * PHI / 2),
}


def pdist(points: np.ndarray) -> np.ndarray:
    d = np.linalg.norm(points[:, None] - points[None], axis=-1)
    return np.sort(d[np.triu_indices(len(points), k=1)])


def cross_min(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a[:, None] - b[None], axis=-1).min())


# ---------------------------------------------------------------- exact shapes


@pytest.mark.parametrize("name", list(SOLIDS))
def test_platonic_solids_are_exact(name):
    n_v, n_e, degree, circumradius = SOLIDS[name]
    v = shape_vertices(name)
    edges = shape_edges(name)
    assert v.shape == (n_v, 3) and len(edges) == n_e
    np.testing.assert_allclose(v.mean(axis=0), 0.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), circumradius, rtol=1e-13)
    d = pdist(v)
    assert d[0] == pytest.approx(1.0, abs=1e-13)  # the shortest distance is the edge, = 1
    assert np.sum(np.abs(d - 1.0) < 1e-9) == n_e
    np.testing.assert_array_equal(np.bincount(edges.ravel(), minlength=n_v), degree)
    assert n_v - n_e + {4: 4, 6: 8, 8: 6, 12: 20, 20: 12}[n_v] == 2  # Euler with known face count


def test_same_count_shapes():
    for name in SHAPE_VARIANTS["same_count"]:
        assert shape_vertices(name).shape == (6, 3)
    assert len(shape_edges("triangular_prism")) == 9
    assert len(shape_edges("hexagon")) == 6
    hexagon = shape_vertices("hexagon")
    assert np.linalg.matrix_rank(hexagon, tol=1e-12) == 2  # planar
    np.testing.assert_allclose(np.linalg.norm(hexagon, axis=1), 1.0, rtol=1e-13)
    prism = shape_vertices("triangular_prism")
    assert pdist(prism)[0] == pytest.approx(1.0, abs=1e-13)
    # prism: 9 unit edges, 6 face diagonals sqrt(2)
    np.testing.assert_allclose(pdist(prism)[9:], math.sqrt(2), rtol=1e-13)


def _best_rmsd(a: np.ndarray, b: np.ndarray, proper: bool) -> float:
    """Least RMSD of b onto a over all node permutations and (proper or improper) rotations."""
    a = a - a.mean(0)
    best = np.inf
    for perm in itertools.permutations(range(len(b))):
        c = b[list(perm)] - b.mean(0)
        u, _, vt = np.linalg.svd(c.T @ a)
        r = u @ vt
        if (np.linalg.det(r) > 0) != proper:
            u[:, -1] *= -1
            r = u @ vt
        best = min(best, float(np.sqrt(np.mean(np.sum((c @ r - a) ** 2, axis=1)))))
    return best


def test_tetris_pieces_and_chirality():
    names = SHAPE_VARIANTS["tetris"]
    assert len(names) == 8
    for name in names:
        v = shape_vertices(name)
        assert v.shape == (4, 3)
        lattice = v - v[0]
        np.testing.assert_allclose(lattice, np.round(lattice), atol=1e-12)  # unit-cube centres
        assert pdist(v)[0] == pytest.approx(1.0)  # unit cubes touching face to face
        assert len(shape_edges(name)) >= 3  # connected (a tree or the square)
    a, b = shape_vertices("chiral_1"), shape_vertices("chiral_2")
    np.testing.assert_allclose(pdist(a), pdist(b), atol=1e-13)  # same distances ...
    assert _best_rmsd(a, b, proper=True) > 0.2  # ... but no rotation maps one onto the other
    assert _best_rmsd(a, b, proper=False) < 1e-12  # a mirror does
    # every other pair of pieces differs in its distances
    for p, q in itertools.combinations(names[2:], 2):
        assert not np.allclose(pdist(shape_vertices(p)), pdist(shape_vertices(q)))


def test_unknown_shape_named():
    with pytest.raises(InputError, match="name"):
        shape_vertices("pentagon")


# ---------------------------------------------------------------- generator


@pytest.mark.parametrize("variant", list(SHAPE_VARIANTS))
def test_generated_graphs(variant):
    ds = shapes_in_noise(40, variant=variant, n_nodes=30, d_min=0.6, random_state=3)
    assert isinstance(ds, GraphDataset) and len(ds) == 40
    assert ds.class_names == SHAPE_VARIANTS[variant]
    counts = np.bincount(ds.labels, minlength=ds.n_classes)
    assert counts.max() - counts.min() <= 1
    for g in ds:
        name = ds.class_names[g.label]
        assert g.info["shape"] == name
        assert g.pos.shape == (30, 3) and g.x.shape == (30, 1)
        np.testing.assert_array_equal(g.x, 1.0)
        template = shape_vertices(name)
        assert g.node_mask.sum() == len(template)
        shape, noise = g.pos[g.node_mask], g.pos[~g.node_mask]
        # the shape is an exact rigid copy: pairwise distances unchanged (rotation invariance)
        np.testing.assert_allclose(pdist(shape), pdist(template), atol=1e-12)
        assert cross_min(noise, shape) >= 0.6
        if variant != "spiral":  # ball noise around the shape's centre
            centre = shape.mean(0)
            assert np.linalg.norm(noise - centre, axis=1).max() <= 3.0 + 1e-12


def test_shape_nodes_are_shuffled():
    ds = shapes_in_noise(30, random_state=0)
    first = np.array([np.flatnonzero(g.node_mask)[0] for g in ds])
    assert len(set(first.tolist())) > 3


def test_densify_points_on_edges():
    ds = shapes_in_noise(10, densify=2, n_nodes=120, random_state=0)
    for g in ds:
        name = ds.class_names[g.label]
        n_v, n_e = len(shape_vertices(name)), len(shape_edges(name))
        shape = g.pos[g.node_mask]
        assert len(shape) == n_v + 2 * n_e
        assert pdist(shape)[0] == pytest.approx(1 / 3, abs=1e-12)
    with pytest.raises(InputError, match="n_nodes"):
        shapes_in_noise(5, densify=2, n_nodes=60, random_state=0)  # dodecahedron needs 80


def _radial_spread(g):
    """Fitted cylinder radius and the 10-90 % spread of the noise points' distance from its axis."""
    from scipy.optimize import least_squares

    noise = g.pos[~g.node_mask]
    centred = noise - noise.mean(0)
    basis = np.linalg.svd(centred, full_matrices=False)[2]

    def residual(p):  # axis = basis[0] tilted by (p0, p1), through p2 * b1 + p3 * b2; radius p4
        axis = basis[0] + p[0] * basis[1] + p[1] * basis[2]
        axis = axis / np.linalg.norm(axis)
        rel = centred - (p[2] * basis[1] + p[3] * basis[2])
        return np.linalg.norm(rel - np.outer(rel @ axis, axis), axis=1) - p[4]

    fit = least_squares(residual, [0, 0, 0, 0, 1.0])
    radial = residual(fit.x) + fit.x[4]
    return np.median(radial), np.quantile(radial, 0.9) - np.quantile(radial, 0.1)


def test_spiral_noise_lies_on_a_helix():
    kw = {"n_nodes": 620, "d_min": 0.0, "noise_radius": 4.0, "random_state": 0}
    for g in shapes_in_noise(5, variant="spiral", **kw):
        median, spread = _radial_spread(g)
        # helix radius is noise_radius / 2 = 2 (jitter 0.05), up to the estimated axis' error
        assert median == pytest.approx(2.0, abs=0.05)
        assert spread < 0.2
    for g in shapes_in_noise(5, variant="platonic", **kw):
        assert _radial_spread(g)[1] > 1.5  # a ball spreads from the axis to its radius


def test_reproducible_and_seed_dependent():
    a = shapes_in_noise(12, variant="same_count", random_state=7)
    b = shapes_in_noise(12, variant="same_count", random_state=7)
    c = shapes_in_noise(12, variant="same_count", random_state=8)
    for g, h in zip(a, b, strict=True):
        np.testing.assert_array_equal(g.pos, h.pos)
        np.testing.assert_array_equal(g.node_mask, h.node_mask)
        assert g.label == h.label
    assert not all(np.array_equal(g.pos, h.pos) for g, h in zip(a, c, strict=True))
    rng = np.random.default_rng(1)
    d = shapes_in_noise(3, random_state=rng)
    assert d[0].pos.shape == (28, 3)


def test_random_rotation_is_uniform_on_so3():
    rng = np.random.default_rng(0)
    rs = np.array([_random_rotation(rng) for _ in range(4000)])
    np.testing.assert_allclose(
        np.einsum("nij,nkj->nik", rs, rs), np.broadcast_to(np.eye(3), rs.shape), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(rs), 1.0, atol=1e-12)
    # Haar measure: E[R] = 0, E[R_ij^2] = 1/3, E[trace] = 0, E[trace^2] = 1
    se = 1 / math.sqrt(4000)
    assert np.abs(rs.mean(0)).max() < 5 * se * math.sqrt(1 / 3)
    assert np.abs((rs**2).mean(0) - 1 / 3).max() < 5 * se * 0.3
    tr = np.trace(rs, axis1=1, axis2=2)
    assert abs(tr.mean()) < 5 * se
    assert abs((tr**2).mean() - 1.0) < 5 * se * 1.5


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    variant=st.sampled_from(list(SHAPE_VARIANTS)),
    extra=st.integers(0, 12),
    d_min=st.floats(0.0, 0.9),
)
def test_property_constant_size_and_separation(seed, variant, extra, d_min):
    n_nodes = 20 + extra
    ds = shapes_in_noise(6, variant=variant, n_nodes=n_nodes, d_min=d_min, random_state=seed)
    for g in ds:
        assert g.n_nodes == n_nodes
        noise = g.pos[~g.node_mask]
        if len(noise):
            assert cross_min(noise, g.pos[g.node_mask]) >= d_min
        rot = _random_rotation(np.random.default_rng(seed))
        np.testing.assert_allclose(pdist(g.pos @ rot.T + 1.5), pdist(g.pos), atol=1e-10)


def test_split_and_subset():
    ds = shapes_in_noise(50, random_state=0)
    train, test = ds.split(0.2, random_state=1)
    assert len(train) == 40 and len(test) == 10
    assert sorted(test.class_counts.values()) == [2] * 5
    ids = {id(g) for g in train} | {id(g) for g in test}
    assert ids == {id(g) for g in ds}
    again = ds.split(0.2, random_state=1)
    assert [id(g) for g in again[1]] == [id(g) for g in test]
    unstrat = ds.split(0.3, stratify=False, random_state=0)
    assert len(unstrat[1]) == 15
    assert ds.subset([3, 1])[0] is ds[3]
    d = ds.to_dict()
    assert d["n_graphs"] == 50 and d["class_counts"]["cube"] == 10 and "graphs" not in d


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"n_graphs": 0}, "n_graphs"),
        ({"n_graphs": 2.5}, "n_graphs"),
        ({"variant": "cubes"}, "variant"),
        ({"n_nodes": 10}, "n_nodes"),
        ({"noise_radius": 0}, "noise_radius"),
        ({"d_min": -1}, "d_min"),
        ({"d_min": 50.0}, "d_min"),
        ({"densify": -1}, "densify"),
        ({"shift": float("nan")}, "shift"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_inputs_named(kwargs, argument):
    args = {"n_graphs": 4, **kwargs}
    n = args.pop("n_graphs")
    with pytest.raises(InputError) as err:
        shapes_in_noise(n, **args)
    assert err.value.argument == argument


def test_bad_split_and_subset_inputs():
    ds = shapes_in_noise(10, random_state=0)
    for bad in (0, 1, 1.5, "x", True):
        with pytest.raises(InputError, match="test_size"):
            ds.split(bad)
    with pytest.raises(InputError, match="stratify"):
        ds.split(0.5, stratify="yes")
    with pytest.raises(InputError, match="indices"):
        ds.subset([0, 10])
    with pytest.raises(InputError, match="indices"):
        ds.subset([0.5])


# ---------------------------------------------------------------- QM9 carbonyl


@pytest.fixture(scope="module")
def qm9():
    return qm9_carbonyl()


def co_pairs(g):
    el = np.array(g.info["elements"])
    c, o = np.flatnonzero(el == "C"), np.flatnonzero(el == "O")
    d = np.linalg.norm(g.pos[c][:, None] - g.pos[o][None], axis=-1)
    return c, o, d


def test_qm9_counts_and_features(qm9):
    assert len(qm9) == 3000
    assert qm9.class_counts == {"no_carbonyl": 1500, "carbonyl": 1500}
    assert qm9.feature_names == QM9_ELEMENTS
    idx = [g.info["qm9_index"] for g in qm9]
    assert idx == sorted(idx) and len(set(idx)) == 3000
    assert 1 <= min(idx) and max(idx) <= 133885
    sizes = np.array([g.n_nodes for g in qm9])
    assert sizes.max() <= 29 and 15 < sizes.mean() < 21
    for g in qm9:
        assert "O" in g.info["elements"]
        assert g.x.shape == (g.n_nodes, 5)
        np.testing.assert_array_equal(g.x.sum(1), 1.0)
        names = np.array(QM9_ELEMENTS)[g.x.argmax(1)]
        assert tuple(names) == g.info["elements"]
        assert np.abs(g.pos.mean(0)).max() < 1e-3  # centred (to the 1e-4 A storage unit)


def test_qm9_label_rule_and_ground_truth(qm9):
    short_all, mid, long_all = [], 0, []
    for g in qm9:
        c, o, d = co_pairs(g)
        short = d < CARBONYL_MAX_DISTANCE
        assert bool(short.any()) == bool(g.label)
        truth = np.zeros(g.n_nodes, bool)
        ci, oi = np.nonzero(short)
        truth[c[ci]] = truth[o[oi]] = True
        np.testing.assert_array_equal(g.node_mask, truth)
        assert g.node_mask.any() == bool(g.label)
        short_all += d[short].tolist()
        mid += int(((d >= 1.25) & (d < 1.30)).sum())
        long_all += d[d >= 1.30].tolist()
    # bimodal: C=O between 1.15 and 1.25 A, no pair in [1.25, 1.30) (left out by construction)
    assert 1.10 < min(short_all) and max(short_all) < 1.25
    assert mid == 0 and min(long_all) >= 1.30
    assert len(short_all) >= 1500


def test_qm9_geometry_is_in_angstrom(qm9):
    """Independent sanity of units: every H sits 0.9-1.2 A from its nearest heavy atom."""
    for g in list(qm9)[::10]:
        el = np.array(g.info["elements"])
        h, heavy = g.pos[el == "H"], g.pos[el != "H"]
        if len(h):
            nearest = np.linalg.norm(h[:, None] - heavy[None], axis=-1).min(1)
            assert nearest.min() > 0.9 and nearest.max() < 1.2


def test_qm9_label_agrees_with_smiles(qm9):
    """Independent oracle: a C=O (or C#O) double bond written in QM9's SMILES, nitro/nitroso removed."""
    bad = []
    for g in qm9:
        s = g.info["smiles"]
        s = re.sub(r"N\(=O\)=O|O=N\(=O\)|\[N\+\]\(=O\)|N=O|O=N", "", s)
        has = "=O" in s or "O=" in s or "#O" in s or "#[O+]" in s
        if has != bool(g.label):
            bad.append(s)
    assert bad == []


def test_qm9_loader_reproducible_and_subsample(qm9):
    again = qm9_carbonyl()
    assert [g.info["qm9_index"] for g in again] == [g.info["qm9_index"] for g in qm9]
    np.testing.assert_array_equal(again[5].pos, qm9[5].pos)
    s1 = qm9_carbonyl(random_state=3)
    s2 = qm9_carbonyl(random_state=3)
    order = [g.info["qm9_index"] for g in s1]
    assert order == [g.info["qm9_index"] for g in s2]
    assert sorted(order) == [g.info["qm9_index"] for g in qm9] and order != sorted(order)
    sub = qm9_carbonyl(n_molecules=101, random_state=0)
    assert len(sub) == 101 and sorted(sub.class_counts.values()) == [50, 51]
    assert [g.info["qm9_index"] for g in sub] == [
        g.info["qm9_index"] for g in qm9_carbonyl(n_molecules=101, random_state=0)
    ]
    fixed = qm9_carbonyl(n_molecules=20)
    idx = [g.info["qm9_index"] for g in fixed]
    assert idx == sorted(idx) and idx == [g.info["qm9_index"] for g in qm9_carbonyl(n_molecules=20)]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"n_molecules": 0}, "n_molecules"),
        ({"n_molecules": 3001}, "n_molecules"),
        ({"n_molecules": "10"}, "n_molecules"),
        ({"random_state": -1}, "random_state"),
    ],
)
def test_qm9_bad_inputs(kwargs, argument):
    with pytest.raises(InputError) as err:
        qm9_carbonyl(**kwargs)
    assert err.value.argument == argument


def test_qm9_info_matches_data_registry_shape(qm9):
    import json

    from trustlab.data import list_datasets

    info = qm9_carbonyl_info()
    assert set(list_datasets()[0]) <= set(info)  # same keys as the tabular datasets' infos
    assert info["rows"] == len(qm9) and info["features"] == list(QM9_ELEMENTS)
    assert sorted(info["classes"]) == sorted(qm9.class_names)
    assert "CC0" in info["licence"] and "10.1038/sdata.2014.22" in info["source"]
    json.dumps(info)


def _build_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "build_qm9_carbonyl.py"
    spec = importlib.util.spec_from_file_location("build_qm9_carbonyl", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_script_parses_mathematica_exponents_and_pairs():
    script = _build_script()
    xyz = script.parse_xyz("[[1.5*^-5,-2.,3],[0.,1.2,-7.0*^-1]]")
    np.testing.assert_array_equal(xyz, [[1.5e-5, -2.0, 3.0], [0.0, 1.2, -0.7]])
    elements = np.array(["O", "C", "H", "C"])
    pos = np.array([[0.0, 0, 0], [1.2, 0, 0], [5, 5, 5], [0, 1.43, 0]])
    d, pairs = script.co_distances(elements, pos)
    order = np.argsort(d)
    np.testing.assert_allclose(d[order], [1.2, 1.43])
    np.testing.assert_array_equal(pairs[order], [[1, 0], [3, 0]])
    assert script.co_distances(np.array(["C", "H"]), pos[:2])[0].size == 0
    assert script.CARBONYL_MAX == CARBONYL_MAX_DISTANCE
