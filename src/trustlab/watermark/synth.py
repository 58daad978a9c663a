"""The deterministic watermarked-image generator (WMarkGPT's synthetic recipe, CPU scale).

:func:`synthesize` draws ``n`` covers (crops of the photos bundled with scikit-image and
scikit-learn, and composed scenes with known objects, see :mod:`trustlab.watermark.covers`) and
watermarks each with one of the requested kinds:

- visible marks (``"logo"``, ``"text"``, ``"pattern"``, see :mod:`trustlab.watermark.marks`),
  blended with WMarkGPT's recipe exactly (:func:`~trustlab.watermark.marks.blend`): the mark is
  pasted at a uniformly random position where it fits, the opacity ``w`` is drawn uniformly from
  ``opacity_range`` and rounded to 0.01; inside the mask ``pixel = (1 - w) * cover + w * mark``;
  the whole image is then shifted by one constant so that its mean equals the cover's mean,
  clipped to [0, 255] and rounded. The score is ``5 - 20 w`` and the level follows from it.
  Two choices of ours keep the visibility a function of ``w`` (Spearman of ``w`` and PSNR below
  -0.95): the mark is resized towards 4-7 % of the image (about 3-7 %, not a bound: measured
  2.75-7.15 % over seeds 0-3, 4711 and 12345), and each
  colour channel of the mark is shifted by one constant so that its RMS difference from the cover
  under the mask is 110 grey levels (where clipping allows);
- invisible marks (``"dwtDctSvd"``, ``"dwtDct"``, ``"rivaGan"``, ``"blind"``) from
  ``invisible-watermark`` and ``blind-watermark``, with their 32 payload bits stored; their level
  comes from the full-reference PSNR (:func:`~trustlab.watermark.marks.score_of_psnr`).

Per image it stores the structured block: the mask; the box
(:func:`~trustlab.watermark.marks.trimmed_box`); the 3x3 cell of the box centre; the orientation
(:func:`~trustlab.watermark.vocabulary.orientation_of_mask`) and principal-axis angle; the relation
to each known object (:func:`~trustlab.watermark.marks.relation_of_boxes`, margin ``size / 32``);
the content type; the opacity or strength; PSNR and SSIM against the cover (scikit-image); the
level; the fraction of the objects' pixels under the mask.

Every image has its own seed (spawned from ``random_state`` with ``numpy.random.SeedSequence``), so
the same seed gives identical arrays, image by image, whatever ``n`` is.

Why this module is long: the dataset container (arrays, structured block, records, files and
their reader) and the generator that fills it share one list of per-image fields; keeping them
together keeps that list in one place.

>>> ds = synthesize(4, random_state=0)
>>> ds.images.shape, ds.images.dtype
((4, 256, 256, 3), dtype('uint8'))
>>> ds.facts(0).level == ds.levels[0]
True
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_int_seed, check_n_jobs
from trustlab._lazy import require
from trustlab._progress import check_progress
from trustlab._results import Result, internal_field, new_axes, replace_saved
from trustlab.errors import InputError
from trustlab.watermark.covers import make_cover
from trustlab.watermark.marks import (
    PAYLOAD_BITS,
    VISIBLE_KINDS,
    _blend,
    _contrast,
    _psnr,
    _ssim,
    embed_invisible,
    make_mark,
    principal_angle,
    relation_of_boxes,
    score_of_psnr,
    trimmed_box,
)
from trustlab.watermark.vocabulary import (
    MAX_OPACITY,
    ObjectRelation,
    WatermarkFacts,
    cell_of_box,
    level_of_score,
    orientation_of_mask,
    score_of_opacity,
)

__all__ = [
    "VISIBLE_KINDS",
    "INVISIBLE_KINDS",
    "KINDS",
    "DEFAULT_STRENGTHS",
    "WatermarkDataset",
    "synthesize",
    "load_watermark_dataset",
]

#: Invisible watermark methods: invisible-watermark's ``dwtDctSvd``, ``dwtDct``, ``rivaGan`` and
#: blind-watermark (``"blind"``).
INVISIBLE_KINDS: tuple[str, ...] = ("dwtDctSvd", "dwtDct", "rivaGan", "blind")
#: Every kind :func:`synthesize` knows.
KINDS: tuple[str, ...] = VISIBLE_KINDS + INVISIBLE_KINDS
#: The strengths drawn (uniformly from the tuple) per invisible method: invisible-watermark's
#: ``scales=[0, s, 0]`` for dwtDctSvd/dwtDct (its default is 36), blind-watermark's ``d1`` (its
#: ``d2`` is ``d1 / 2``; the library's default is 36, 20), RivaGAN has none (1.0).
DEFAULT_STRENGTHS: dict[str, tuple[float, ...]] = {
    "dwtDctSvd": (36.0, 72.0, 150.0, 300.0),
    "dwtDct": (36.0, 72.0, 150.0, 300.0),
    "rivaGan": (1.0,),
    "blind": (36.0, 72.0, 150.0),
}
_FINAL = "The watermark visibility is: {}."
#: Range of a visible mark's mask area, as a fraction of the image (the mark is resized to it).
_AREA = (0.04, 0.07)


# --------------------------------------------------------------------------------------------------
# The dataset
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WatermarkDataset(Result):
    """Watermarked images with their covers, masks and structured ground truth.

    Attributes
    ----------
    images, covers : uint8 arrays (n, H, W, 3)
    masks : bool array (n, H, W)
        The watermark's pixels (all False for clean images and for invisible marks, which have no
        region: they spread weak changes over the whole image; their box is the whole image).
    marks : uint8 array (n, H, W, 3)
        The mark layer blended in (zeros outside the mask; zeros for invisible and clean images).
    object_masks : bool array (n, H, W)
        The union of the known objects' pixels (all False without objects).
    kinds : tuple of str
        The kind per image (one of :data:`KINDS`, or ``"clean"``).
    content_types : tuple of str
    present : bool array (n,)
    opacity : float array (n,)
        ``w`` of visible marks (NaN otherwise).
    strength : float array (n,)
        The strength of invisible marks (NaN otherwise).
    scores : float array (n,)
    levels : tuple of str
    boxes : int array (n, 4)
        ``(x0, y0, x1, y1)``; ``(0, 0, W, H)`` for invisible marks, zeros for clean images.
    cells, orientations : tuple of str
    angles : float array (n,)
        Principal-axis angle (degrees from the horizontal; NaN where not defined).
    psnr, ssim : float arrays (n,)
        Against the cover (scikit-image; PSNR is inf for an identical image).
    shifts : float array (n,)
        The brightness shift of the blend (0 for other images).
    coverage : float array (n,)
        Fraction of the union of the objects' pixels under the watermark mask (0 without objects).
    objects : tuple of tuple of (name, box)
    relations : tuple of tuple of (name, relation)
    objects_known : bool array (n,)
    payloads : tuple of (bool array or None)
        The embedded bits of invisible marks.
    sources : tuple of str
        Where each cover came from.
    random_state : int
        The seed the per-image seeds were spawned from.
    """

    size: int
    random_state: int
    kinds: tuple[str, ...] = internal_field()
    content_types: tuple[str, ...] = internal_field()
    levels: tuple[str, ...] = internal_field()
    cells: tuple[str, ...] = internal_field()
    orientations: tuple[str, ...] = internal_field()
    sources: tuple[str, ...] = internal_field()
    objects: tuple[tuple[tuple[str, tuple[int, int, int, int]], ...], ...] = internal_field()
    relations: tuple[tuple[tuple[str, str], ...], ...] = internal_field()
    images: np.ndarray = internal_field()
    covers: np.ndarray = internal_field()
    masks: np.ndarray = internal_field()
    marks: np.ndarray = internal_field()
    object_masks: np.ndarray = internal_field()
    present: np.ndarray = internal_field()
    opacity: np.ndarray = internal_field()
    strength: np.ndarray = internal_field()
    scores: np.ndarray = internal_field()
    boxes: np.ndarray = internal_field()
    angles: np.ndarray = internal_field()
    psnr: np.ndarray = internal_field()
    shifts: np.ndarray = internal_field()
    coverage: np.ndarray = internal_field()
    objects_known: np.ndarray = internal_field()
    payloads: tuple = internal_field(default=())
    ssim_cache: np.ndarray | None = internal_field(default=None)
    _dict_extras = ("n_images", "kind_counts", "level_counts")
    figure_name = "watermark_dataset.png"
    figure_size = (8.0, 6.0)

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def n_images(self) -> int:
        """The number of images."""
        return len(self)

    @property
    def ssim(self) -> np.ndarray:
        """SSIM of each image against its cover (scikit-image, 7x7 uniform window, mean over the
        channels), computed on first use (it costs more than generating the image)."""
        if self.ssim_cache is None:
            values = np.array(
                [_ssim(c, x) for c, x in zip(self.covers, self.images, strict=True)],
                dtype=np.float64,
            )
            values.setflags(write=False)
            object.__setattr__(self, "ssim_cache", values)
        return self.ssim_cache

    @property
    def kind_counts(self) -> dict[str, int]:
        """Images per kind."""
        return {k: self.kinds.count(k) for k in sorted(set(self.kinds))}

    @property
    def level_counts(self) -> dict[str, int]:
        """Images per visibility level."""
        return {k: self.levels.count(k) for k in sorted(set(self.levels))}

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in self.kind_counts.items())
        levels = ", ".join(f"{k} {v}" for k, v in self.level_counts.items())
        return (
            f"WatermarkDataset: {len(self)} images of {self.size}x{self.size} "
            f"(seed {self.random_state})\n  kinds: {kinds}\n  levels: {levels}"
        )

    def facts(self, i: int) -> WatermarkFacts:
        """The ground-truth :class:`~trustlab.watermark.vocabulary.WatermarkFacts` of image ``i``."""
        i = self._index(i)
        w = float(self.opacity[i])
        return WatermarkFacts(
            present=bool(self.present[i]),
            score=float(self.scores[i]),
            level=self.levels[i],
            cell=self.cells[i],
            orientation=self.orientations[i],
            content_type=self.content_types[i],
            opacity=None if math.isnan(w) else w,
            relations=tuple(ObjectRelation(n, r) for n, r in self.relations[i]),
            objects_known=bool(self.objects_known[i]),
            coverage=float(self.coverage[i]),
        )

    def subset(self, indices: Sequence[int] | np.ndarray) -> WatermarkDataset:
        """The images at ``indices`` (in that order), as a new dataset. Negative indices count
        from the end (``-1`` is the last image); a bool mask of one value per image selects too.

        >>> synthesize(3, random_state=0).subset([2, 0]).n_images
        2
        """
        idx = np.asarray(indices)
        if idx.dtype == bool:
            if idx.shape != (len(self),):  # a short mask took its first images, silently
                raise InputError.bad("indices", f"a bool mask of {len(self)} values", idx.shape)
            idx = np.flatnonzero(idx)
        elif idx.shape == (0,):  # numpy reads [] as floats: no images, as an int array gives
            idx = idx.astype(np.intp)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise InputError.bad("indices", "a 1-D sequence of image indices", indices)
        if idx.size and (idx.min() < -len(self) or idx.max() >= len(self)):
            n = len(self)
            raise InputError.bad(
                "indices", f"indices in [{-n}, {n - 1}] (negative ones count from the end)", indices
            )
        idx = idx % len(self)
        values = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name in ("size", "random_state"):
                values[f.name] = v
            elif isinstance(v, np.ndarray):
                values[f.name] = v[idx]
            elif isinstance(v, tuple):
                values[f.name] = tuple(v[i] for i in idx) if v else v
            else:
                values[f.name] = v
        return WatermarkDataset(**values)

    def _index(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(self):
            raise InputError.bad("i", f"an image index in [0, {len(self)})", i)
        return int(i)

    def structured(self, i: int) -> dict[str, Any]:
        """The structured block of image ``i`` as JSON values (the mask is left out)."""
        i = self._index(i)

        def num(v: float) -> float | None:
            v = float(v)
            return v if math.isfinite(v) else None

        return {
            "kind": self.kinds[i],
            "present": bool(self.present[i]),
            "content_type": self.content_types[i],
            "opacity": num(self.opacity[i]),
            "strength": num(self.strength[i]),
            "score": float(self.scores[i]),
            "level": self.levels[i],
            "box": [int(v) for v in self.boxes[i]],
            "cell": self.cells[i],
            "orientation": self.orientations[i],
            "angle": num(self.angles[i]),
            "psnr": num(self.psnr[i]),
            "ssim": num(self.ssim[i]),
            "brightness_shift": float(self.shifts[i]),
            "coverage": float(self.coverage[i]),
            "objects_known": bool(self.objects_known[i]),
            "objects": [{"name": n, "box": list(b)} for n, b in self.objects[i]],
            "relations": [{"name": n, "relation": r} for n, r in self.relations[i]],
            "payload": None
            if i >= len(self.payloads) or self.payloads[i] is None
            else [int(b) for b in self.payloads[i]],
            "source": self.sources[i],
        }

    def image_name(self, i: int) -> str:
        """The file name of image ``i`` in :meth:`save` and :meth:`records`."""
        return f"{self._index(i):05d}.png"

    def records(
        self, describer: Callable[..., str] | None = None, random_state: int = 0
    ) -> list[dict[str, Any]]:
        """One JSON record per image in WMarkGPT's conversation format, plus ``"structured"``.

        Keys: ``image``, ``id``, ``gt_score``, ``visibility``, ``conversations`` (``human`` with
        ``<|image|>`` and a question, ``gpt`` with the describer's paragraph) and ``structured``
        (:meth:`structured`). ``describer(facts, random_state=seed)`` defaults to
        ``trustlab.watermark.describer.describe``; its paragraph must end with
        ``"The watermark visibility is: L."``.
        """
        if describer is None:
            from trustlab.watermark.describer import describe as describer  # type: ignore
        if not callable(describer):
            raise InputError.bad(
                "describer", "a callable (facts, random_state=...) -> str", describer
            )
        random_state = check_int_seed(random_state)
        from trustlab.watermark.describer import QUESTIONS as questions

        seeds = np.random.SeedSequence(random_state).generate_state(max(len(self), 1))
        out = []
        for i in range(len(self)):
            seed = int(seeds[i])
            answer = describer(self.facts(i), random_state=seed)
            final = _FINAL.format(self.levels[i])
            if not isinstance(answer, str) or not answer.endswith(final):
                raise InputError.bad("describer", f"a paragraph ending with {final!r}", answer)
            question = questions[seed % len(questions)]
            name = self.image_name(i)
            out.append(
                {
                    "image": name,
                    "id": name,
                    "gt_score": round(float(self.scores[i]), 4),
                    "visibility": self.levels[i],
                    "conversations": [
                        {"from": "human", "value": "<|image|>" + question},
                        {"from": "gpt", "value": answer},
                    ],
                    "structured": self.structured(i),
                }
            )
        return out

    def plot(self, ax: Any = None, *, n: int = 12) -> Any:
        """A grid of up to ``n`` images with their mask outlines and level."""
        ax = new_axes(ax, self.figure_size)
        k = max(1, min(int(n), len(self)))
        cols = int(math.ceil(math.sqrt(k * 4 / 3)))
        rows = int(math.ceil(k / cols))
        s = self.size
        canvas = np.full((rows * (s + 4), cols * (s + 4), 3), 255, dtype=np.uint8)
        segmentation = require("skimage.segmentation", "watermark")
        for j in range(k):
            r, c = divmod(j, cols)
            img = self.images[j].copy()
            if self.present[j] and not self.masks[j].all():
                edge = segmentation.find_boundaries(self.masks[j], mode="inner")
                img[edge] = (255, 0, 255)
            canvas[r * (s + 4) : r * (s + 4) + s, c * (s + 4) : c * (s + 4) + s] = img
        ax.imshow(canvas)
        for j in range(k):
            r, c = divmod(j, cols)
            ax.text(
                c * (s + 4) + 4,
                r * (s + 4) + 14,
                f"{self.kinds[j]} {self.levels[j]}",
                fontsize=6,
                color="yellow",
                bbox={"facecolor": "black", "alpha": 0.5, "pad": 1},
            )
        ax.set_axis_off()
        ax.set_title(f"{len(self)} synthetic watermarked images (magenta: mask outline)")
        return ax

    def save(self, out_dir: str | os.PathLike) -> list[Path]:
        """Write ``images/<i>.png``, ``annotations.json`` (per-image structured blocks and the
        dataset's fields) and ``arrays.npz`` (covers, masks, marks, object masks); :func:`load_watermark_dataset` reads
        them back.

        Over an earlier save, the folder holds the earlier dataset or none at any moment: the
        images and ``arrays.npz`` are written whole aside first, then the earlier
        ``annotations.json`` (what marks a dataset, read first by the loader) is removed, the new
        files renamed into place and ``annotations.json`` written last. Stopped while writing,
        the earlier dataset loads as it was; never new images under its annotations."""
        from PIL import Image

        out = Path(out_dir)
        (out / "images").mkdir(parents=True, exist_ok=True)
        meta = {
            "format": "trustlab.watermark.synth/1",
            "size": self.size,
            "random_state": self.random_state,
            "n_images": len(self),
            "images": [
                self.structured(i) | {"image": self.image_name(i)} for i in range(len(self))
            ],
        }
        arrays = {
            "covers": self.covers,
            "masks": self.masks,
            "marks": self.marks,
            "object_masks": self.object_masks,
        }

        def png(image: np.ndarray) -> Callable[[Path], None]:
            return lambda tmp: Image.fromarray(image).save(tmp, format="PNG")

        def npz(tmp: Path) -> None:
            full = tmp.with_name(tmp.name + ".npz")  # numpy adds .npz to a name without it
            try:
                np.savez_compressed(full, **arrays)
                os.replace(full, tmp)
            finally:
                full.unlink(missing_ok=True)

        files: dict[str, Any] = {
            f"images/{self.image_name(i)}": png(self.images[i]) for i in range(len(self))
        }
        files["arrays.npz"] = npz
        # review 67: the earlier annotations.json was removed before the images were rewritten
        # in place, so an overwrite stopped there lost the earlier dataset
        written = replace_saved(out, files, {"annotations.json": json.dumps(meta, indent=1)})
        return written[:-2] + [written[-1], written[-2]]  # images, annotations.json, arrays.npz


def load_watermark_dataset(path: str | os.PathLike) -> WatermarkDataset:
    """Read a dataset written by :meth:`WatermarkDataset.save`.

    Examples
    --------
    >>> import tempfile
    >>> ds = synthesize(2, random_state=3)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = ds.save(d)
    ...     back = load_watermark_dataset(d)
    >>> bool((back.images == ds.images).all()), back.levels == ds.levels
    (True, True)
    """
    from PIL import Image

    root = Path(path)
    ann = root / "annotations.json"
    if not ann.is_file():
        raise InputError.bad("path", "a folder written by WatermarkDataset.save", str(path))
    try:  # a damaged or hand-edited folder: one error naming it, never a raw traceback
        meta = json.loads(ann.read_text())
        recs = meta["images"]
        with np.load(root / "arrays.npz") as npz:
            arrays = {k: npz[k] for k in ("covers", "masks", "marks", "object_masks")}
        counts = {k: len(v) for k, v in arrays.items()}
        if any(c != len(recs) for c in counts.values()):
            raise ValueError(f"{len(recs)} records in annotations.json but arrays of {counts}")
        images = np.stack(
            [np.asarray(Image.open(root / "images" / r["image"]).convert("RGB")) for r in recs]
        )
        return _dataset_of(meta, recs, arrays, images)
    except (
        OSError,
        KeyError,
        ValueError,
        TypeError,
        IndexError,
        EOFError,
        zipfile.BadZipFile,
    ) as exc:
        detail = f"no entry {exc}" if isinstance(exc, KeyError) else str(exc)
        if isinstance(exc, EOFError):  # numpy on an empty arrays.npz
            detail = "arrays.npz is empty or cut short"
        # in full: InputError.bad cuts its text at 80 characters, which a long path fills
        got = f"{path} ({' '.join(detail.split())})"
        raise InputError(
            f"path: expected a readable dataset folder, got {got!r}", argument="path"
        ) from None


def _dataset_of(meta: Any, recs: Any, arrays: dict, images: np.ndarray) -> WatermarkDataset:
    """The dataset of a saved folder's parsed annotations and arrays."""

    def num(v: Any) -> float:
        return math.nan if v is None else float(v)

    def arr(key: str) -> np.ndarray:
        return np.array([num(r[key]) for r in recs], dtype=np.float64)

    psnr = np.array([math.inf if r["psnr"] is None else r["psnr"] for r in recs], np.float64)
    return WatermarkDataset(
        size=int(meta["size"]),
        random_state=int(meta["random_state"]),
        kinds=tuple(r["kind"] for r in recs),
        content_types=tuple(r["content_type"] for r in recs),
        levels=tuple(r["level"] for r in recs),
        cells=tuple(r["cell"] for r in recs),
        orientations=tuple(r["orientation"] for r in recs),
        sources=tuple(r["source"] for r in recs),
        objects=tuple(tuple((o["name"], tuple(o["box"])) for o in r["objects"]) for r in recs),
        relations=tuple(tuple((o["name"], o["relation"]) for o in r["relations"]) for r in recs),
        images=images,
        covers=arrays["covers"],
        masks=arrays["masks"],
        marks=arrays["marks"],
        object_masks=arrays["object_masks"],
        present=np.array([r["present"] for r in recs], dtype=bool),
        opacity=arr("opacity"),
        strength=arr("strength"),
        scores=arr("score"),
        boxes=np.array([r["box"] for r in recs], dtype=np.int64).reshape(-1, 4),
        angles=arr("angle"),
        psnr=psnr,
        ssim_cache=arr("ssim"),
        shifts=arr("brightness_shift"),
        coverage=arr("coverage"),
        objects_known=np.array([r["objects_known"] for r in recs], dtype=bool),
        payloads=tuple(
            None if r["payload"] is None else np.array(r["payload"], dtype=bool) for r in recs
        ),
    )


# --------------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------------


_FLOAT_MAX = float(np.finfo(np.float64).max)  # 10**400 overflows float(); NaN fails '<='


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


def _hundredths(lo: float, hi: float) -> tuple[int, int]:
    """The smallest and largest multiple of 0.01 in [lo, hi], in hundredths."""
    return math.ceil(lo * 100 - 1e-9), math.floor(hi * 100 + 1e-9)


def _check_args(n, random_state, kinds, size, clean_fraction, opacity_range, progress, strengths):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError.bad("n", "a positive int", n)
    if isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(2**63))
    elif random_state is None:
        seed = int(np.random.SeedSequence().entropy % 2**63)
    elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise InputError.bad("random_state", "a non-negative int seed", random_state)
        seed = int(random_state)
    else:
        raise InputError.bad("random_state", "None, an int seed or a numpy Generator", random_state)
    if isinstance(kinds, str):
        kinds = (kinds,)
    try:
        kinds = tuple(kinds)
    except TypeError:
        raise InputError.bad("kinds", "a sequence of watermark kinds", kinds) from None
    if not kinds or any(k not in KINDS for k in kinds):
        raise InputError.bad("kinds", f"a non-empty sequence of {', '.join(KINDS)}", kinds)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 256:
        raise InputError.bad("size", "an int >= 256 (invisible-watermark needs 256x256)", size)
    cf = float(clean_fraction) if isinstance(clean_fraction, (int, float, np.number)) else None
    if cf is None or isinstance(clean_fraction, bool) or not 0.0 <= cf <= 1.0:
        raise InputError.bad("clean_fraction", "a fraction in [0, 1]", clean_fraction)
    try:
        lo, hi = (float(v) for v in opacity_range)
    except (TypeError, ValueError):
        raise InputError.bad("opacity_range", "a pair (low, high)", opacity_range) from None
    if not (0.0 <= lo <= hi <= MAX_OPACITY):
        raise InputError.bad("opacity_range", f"0 <= low <= high <= {MAX_OPACITY}", opacity_range)
    k_lo, k_hi = _hundredths(lo, hi)
    if k_lo > k_hi:  # (0.001, 0.004) drew w = 0 for every mark: no blend at all
        raise InputError.bad(
            "opacity_range", "a range holding a multiple of 0.01 (w is rounded to 0.01)", (lo, hi)
        )
    check_progress(progress, "None or a callable progress(done, total)")
    table = dict(DEFAULT_STRENGTHS)
    if strengths is not None:
        if not isinstance(strengths, Mapping) or any(k not in INVISIBLE_KINDS for k in strengths):
            raise InputError.bad(
                "strengths", f"a mapping from {', '.join(INVISIBLE_KINDS)} to strengths", strengths
            )
        for k, v in strengths.items():
            # one number or numbers (a list, a tuple, an array); a string is no number: "36"
            # was read as its characters, the strengths 3 and 6
            items = list(np.ravel(np.asarray(v, dtype=object)))
            if not items or not all(_is_number(x) and 0 < x <= _FLOAT_MAX for x in items):
                raise InputError.bad(f"strengths[{k!r}]", "positive finite strengths", v)
            table[k] = tuple(float(x) for x in items)
        if table["rivaGan"] != (1.0,):  # recorded as strengths its fixed embedding never had
            raise InputError.bad(
                "strengths['rivaGan']", "1.0 (RivaGAN has no strength)", strengths["rivaGan"]
            )
    return int(n), seed, kinds, int(size), cf, (lo, hi), table


def synthesize(
    n: int,
    *,
    random_state: int | np.random.Generator | None = 0,
    kinds: Sequence[str] = VISIBLE_KINDS,
    size: int = 256,
    clean_fraction: float = 0.0,
    opacity_range: tuple[float, float] = (0.0, MAX_OPACITY),
    progress: Callable[[int, int], Any] | None = None,
    strengths: Mapping[str, Sequence[float]] | None = None,
    n_jobs: int | None = 1,
) -> WatermarkDataset:
    """Generate ``n`` watermarked images with WMarkGPT's recipe (deterministic from the seed).

    Parameters
    ----------
    n : int
        Number of images (>= 1).
    random_state : int, Generator or None
        Seed of the per-image seeds (``SeedSequence(random_state).spawn(n)``).
    kinds : sequence of str
        Kinds drawn uniformly per image, from :data:`KINDS`.
    size : int
        Side of the square images (>= 256).
    clean_fraction : float
        Probability that an image is left without watermark (``kind == "clean"``).
    opacity_range : (float, float)
        Range of the visible marks' opacity ``w`` (within [0, 0.25]); ``w`` is rounded to 0.01,
        to the nearest such value inside the range (which must hold one).
    progress : callable or None
        Called as ``progress(done, n)`` after each image.
    strengths : mapping or None
        Strengths drawn per invisible method (default :data:`DEFAULT_STRENGTHS`).
    n_jobs : int or None
        Processes that generate the images (joblib; -1: every core). Each image has its own
        seed, so the images are the same for any ``n_jobs``; ``progress`` is then called after
        each chunk of images.

    Returns
    -------
    WatermarkDataset

    Examples
    --------
    >>> ds = synthesize(3, random_state=1, kinds=("text",))
    >>> ds.kinds
    ('text', 'text', 'text')
    >>> bool(np.isclose(ds.scores[0], 5 - 20 * ds.opacity[0]))
    True
    """
    n, seed, kinds, size, clean_fraction, (lo, hi), table = _check_args(
        n, random_state, kinds, size, clean_fraction, opacity_range, progress, strengths
    )
    jobs = check_n_jobs(n_jobs)
    children = np.random.SeedSequence(seed).spawn(n)
    arrays = {
        "image": np.empty((n, size, size, 3), dtype=np.uint8),
        "cover": np.empty((n, size, size, 3), dtype=np.uint8),
        "mask": np.empty((n, size, size), dtype=bool),
        "mark": np.empty((n, size, size, 3), dtype=np.uint8),
        "object_mask": np.empty((n, size, size), dtype=bool),
    }
    rows: list[dict[str, Any]] = []
    if jobs == 1 or n == 1:
        made: Any = (
            [_one(np.random.default_rng(c), kinds, size, clean_fraction, lo, hi, table)]
            for c in children
        )
    else:  # chunks of consecutive images, returned in order
        from joblib import Parallel, delayed

        step = max(1, math.ceil(n / (4 * jobs)))
        made = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_chunk)(children[s : s + step], kinds, size, clean_fraction, lo, hi, table)
            for s in range(0, n, step)
        )
    for chunk in made:
        for row in chunk:
            i = len(rows)
            for key, out in arrays.items():
                out[i] = row.pop(key)
            rows.append(row)
        if progress is not None:
            progress(len(rows), n)
    return _assemble(rows, arrays, size, seed)


def _chunk(children, kinds, size, clean_fraction, lo, hi, table) -> list[dict[str, Any]]:
    return [
        _one(np.random.default_rng(c), kinds, size, clean_fraction, lo, hi, table) for c in children
    ]


def _one(rng, kinds, size, clean_fraction, lo, hi, table) -> dict[str, Any]:
    kind = str(rng.choice(kinds))
    clean = bool(rng.random() < clean_fraction)
    cover = make_cover(rng, size, scene=bool(rng.random() < 0.6))
    row: dict[str, Any] = {
        "cover": cover.image,
        "source": cover.source,
        "objects": tuple((o.name, o.box) for o in cover.objects),
        "objects_known": cover.objects_known,
        "opacity": math.nan,
        "strength": math.nan,
        "shift": 0.0,
        "payload": None,
        "angle": math.nan,
    }
    zeros = np.zeros((size, size), dtype=bool)
    union = zeros.copy()
    for o in cover.objects:
        union |= o.mask
    row["object_mask"] = union
    if clean:
        row |= {
            "kind": "clean",
            "content_type": "invisible",
            "image": cover.image.copy(),
            "mask": zeros,
            "mark": np.zeros_like(cover.image),
            "present": False,
            "score": 5.0,
            "box": (0, 0, 0, 0),
            "cell": "Center",
            "orientation": "horizontal",
            "relations": (),
            "coverage": 0.0,
            "psnr": math.inf,
        }
        return row
    if kind in VISIBLE_KINDS:
        area = int(round(rng.uniform(*_AREA) * size * size))
        rgb, local = make_mark(rng, kind, size, area=area)
        h, w = local.shape
        y = int(rng.integers(0, size - h + 1))
        x = int(rng.integers(0, size - w + 1))
        mask = zeros.copy()
        mask[y : y + h, x : x + w] = local
        rgb = _contrast(rgb, cover.image[y : y + h, x : x + w], local)
        mark = np.zeros_like(cover.image)
        mark[y : y + h, x : x + w][local] = rgb[local]
        opacity = round(float(rng.uniform(lo, hi)), 2)
        if not lo <= opacity <= hi:  # rounded out of the range: the nearest 0.01 inside it
            k_lo, k_hi = _hundredths(lo, hi)
            opacity = min(max(k_lo, round(opacity * 100)), k_hi) / 100
        image, shift = _blend(cover.image, mark, mask, opacity)
        box = trimmed_box(mask)
        orientation, angle = orientation_of_mask(mask), principal_angle(mask)
        score = score_of_opacity(opacity)
        row |= {"opacity": opacity, "shift": shift, "angle": angle, "content_type": kind}
    else:
        strength = float(rng.choice(table[kind]))
        payload = rng.random(PAYLOAD_BITS) < 0.5
        image = embed_invisible(kind, cover.image, strength, payload)
        mask = zeros
        mark = np.zeros_like(cover.image)
        box = (0, 0, size, size)
        orientation = "horizontal"
        row |= {"strength": strength, "payload": payload, "content_type": "invisible"}
    psnr = _psnr(cover.image, image)
    if kind not in VISIBLE_KINDS:
        score = score_of_psnr(psnr)
    margin = size / 32
    relations = tuple((o.name, relation_of_boxes(box, o.box, margin=margin)) for o in cover.objects)
    coverage = float((mask & union).sum() / union.sum()) if union.any() else 0.0
    row |= {
        "kind": kind,
        "image": image,
        "mask": mask,
        "mark": mark,
        "present": True,
        "score": float(score),
        "box": tuple(int(v) for v in box),
        "cell": cell_of_box(box, width=size, height=size),
        "orientation": orientation,
        "relations": relations,
        "coverage": coverage,
        "psnr": psnr,
    }
    return row


def _assemble(
    rows: list[dict[str, Any]], arrays: dict[str, np.ndarray], size: int, seed: int
) -> WatermarkDataset:
    def col(key: str) -> list[Any]:
        return [r[key] for r in rows]

    def f64(key: str) -> np.ndarray:
        return np.array(col(key), dtype=np.float64)

    return WatermarkDataset(
        size=size,
        random_state=seed,
        kinds=tuple(col("kind")),
        content_types=tuple(col("content_type")),
        levels=tuple(level_of_score(s) for s in col("score")),
        cells=tuple(col("cell")),
        orientations=tuple(col("orientation")),
        sources=tuple(col("source")),
        objects=tuple(col("objects")),
        relations=tuple(col("relations")),
        images=arrays["image"],
        covers=arrays["cover"],
        masks=arrays["mask"],
        marks=arrays["mark"],
        object_masks=arrays["object_mask"],
        present=np.array(col("present"), dtype=bool),
        opacity=f64("opacity"),
        strength=f64("strength"),
        scores=f64("score"),
        boxes=np.array(col("box"), dtype=np.int64).reshape(-1, 4),
        angles=f64("angle"),
        psnr=f64("psnr"),
        shifts=f64("shift"),
        coverage=f64("coverage"),
        objects_known=np.array(col("objects_known"), dtype=bool),
        payloads=tuple(col("payload")),
    )
