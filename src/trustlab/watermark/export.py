"""Export for WMarkGPT's three-stage fine-tune: Position-lite QA and the stage datasets.

WMarkGPT (Tan et al., ICML 2025) trains in three stages on three VQA datasets in one JSON schema
(LLaVA-style conversations, mPLUG-Owl2's ``<|image|>`` token): WQA-Position (where is object A
relative to object B, answered with one of nine labels), WQA-Synthetic (descriptions of blended
watermarks ending with ``"The watermark visibility is: L."``) and WQA-Real (real watermarks).

- :func:`position_lite` builds Position-lite: composed scenes (objects on photos and textures, see
  :mod:`trustlab.watermark.covers`), one question per image about two objects with different names,
  answered by :func:`position_label`. The authors did not release their geometric rule; ours
  compares box centres with a margin of half the reference object's extent on each axis: A is
  *left* of B if ``cx_A < cx_B - w_B / 2``, *right* if ``cx_A > cx_B + w_B / 2``, otherwise in the
  middle column (the same with ``cy``/``h_B`` for top/bottom); the two bins name one of
  :data:`~trustlab.watermark.vocabulary.CELLS` (middle/middle is ``"Center"``).
- :func:`export_stages` writes the three stage folders (``WQA-Position``, ``WQA-Synthetic``,
  ``WQA-Real``), each with ``train.json`` in the authors' schema (``image``, ``id``, [``gt_score``,
  ``visibility``,] ``conversations``) and ``images/*.png``. WQA-Real is left empty with a note:
  real watermarked images with human scores are not something a generator can make. A
  non-empty ``WQA-Real/train.json`` the user put there is kept by a later export.

>>> pos = position_lite(2, random_state=0)
>>> pos.records[0]["conversations"][1]["value"] in CELLS
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_int_seed
from trustlab._results import Result, internal_field, replace_saved
from trustlab.errors import InputError
from trustlab.watermark.covers import make_cover
from trustlab.watermark.vocabulary import CELLS

__all__ = [
    "POSITION_QUESTIONS",
    "STAGES",
    "PositionLite",
    "StageExport",
    "position_label",
    "position_lite",
    "export_stages",
]

#: The three stage folders, in training order.
STAGES: tuple[str, ...] = ("WQA-Position", "WQA-Synthetic", "WQA-Real")
#: Question templates of Position-lite (our own wording; ``{a}`` is asked about relative to ``{b}``).
POSITION_QUESTIONS: tuple[str, ...] = (
    "Where is {a} relative to {b}?",
    "Where is {a} located with respect to {b}?",
    "What is the position of {a} relative to {b}?",
    "How is {a} placed compared to {b}?",
    "In which direction from {b} is {a}?",
    "Where does {a} appear in relation to {b}?",
)
_IMAGE_TOKEN = "<|image|>"


def _box(value: Any, name: str) -> tuple[float, float, float, float]:
    try:
        box = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a box (x0, y0, x1, y1)", value) from None
    if len(box) != 4 or not all(np.isfinite(box)) or box[2] <= box[0] or box[3] <= box[1]:
        raise InputError.bad(name, "a box (x0, y0, x1, y1) with x1 > x0 and y1 > y0", value)
    return box  # type: ignore[return-value]


def position_label(box_a: Sequence[float], box_b: Sequence[float]) -> str:
    """Where box A lies relative to box B, as one of WMarkGPT's nine labels.

    The centre of A is compared with the centre of B, with a margin of half B's width
    (horizontally) and half B's height (vertically); see the module docstring.

    Examples
    --------
    >>> position_label((80, 80, 90, 90), (0, 0, 20, 20))
    'Bottom-right'
    >>> position_label((5, 40, 15, 50), (0, 0, 20, 20))
    'Middle-bottom'
    """
    a = _box(box_a, "box_a")
    b = _box(box_b, "box_b")
    ax, ay = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    bx, by = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    mx, my = (b[2] - b[0]) / 2, (b[3] - b[1]) / 2
    col = 0 if ax < bx - mx else (2 if ax > bx + mx else 1)
    row = 0 if ay < by - my else (2 if ay > by + my else 1)
    return CELLS[3 * row + col]


@dataclass(frozen=True)
class PositionLite(Result):
    """Position-lite: composed scenes and one position question per image.

    Attributes
    ----------
    records : list of dict
        WMarkGPT's schema (``image``, ``id``, ``conversations``) plus ``structured`` (the two
        objects' names and boxes, and every object of the scene).
    images : uint8 array (n, H, W, 3)
    """

    random_state: int
    size: int
    records: list = internal_field()
    images: np.ndarray = internal_field()
    _dict_extras = ("n_images", "label_counts")

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def n_images(self) -> int:
        """The number of images (one question each)."""
        return len(self)

    @property
    def label_counts(self) -> dict[str, int]:
        """Answers per label."""
        answers = [r["conversations"][1]["value"] for r in self.records]
        return {c: answers.count(c) for c in CELLS if c in answers}

    def summary(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.label_counts.items())
        return f"PositionLite: {len(self)} questions on {self.size}x{self.size} scenes\n  {counts}"


def position_lite(n: int, random_state: int = 0, *, size: int = 256) -> PositionLite:
    """``n`` Position-lite questions on composed scenes (deterministic from the seed).

    Parameters
    ----------
    n : int
        Number of images (one question each).
    random_state : int
        Seed of the per-image seeds.
    size : int
        Side of the square images (>= 64).

    Returns
    -------
    PositionLite

    Examples
    --------
    >>> pos = position_lite(3, random_state=1)
    >>> sorted(pos.records[0])
    ['conversations', 'id', 'image', 'structured']
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError.bad("n", "a positive int", n)
    seed = check_int_seed(random_state)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 64:
        raise InputError.bad("size", "an int >= 64", size)
    images = np.empty((n, size, size, 3), dtype=np.uint8)
    records = []
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(int(n))):
        rng = np.random.default_rng(child)
        while True:
            cover = make_cover(rng, int(size), scene=True)
            names = [o.name for o in cover.objects]
            pairs = [
                (p, q)
                for p in range(len(names))
                for q in range(len(names))
                if p != q and names.count(names[p]) == 1 and names.count(names[q]) == 1
            ]
            if pairs:
                break
        p, q = pairs[int(rng.integers(len(pairs)))]
        a, b = cover.objects[p], cover.objects[q]
        question = POSITION_QUESTIONS[int(rng.integers(len(POSITION_QUESTIONS)))]
        name = f"position_{i:05d}.png"
        images[i] = cover.image
        records.append(
            {
                "image": name,
                "id": name,
                "conversations": [
                    {"from": "human", "value": _IMAGE_TOKEN + question.format(a=a.name, b=b.name)},
                    {"from": "gpt", "value": position_label(a.box, b.box)},
                ],
                "structured": {
                    "subject": {"name": a.name, "box": list(a.box)},
                    "reference": {"name": b.name, "box": list(b.box)},
                    "objects": [{"name": o.name, "box": list(o.box)} for o in cover.objects],
                    "source": cover.source,
                },
            }
        )
    return PositionLite(random_state=seed, size=int(size), records=records, images=images)


@dataclass(frozen=True)
class StageExport(Result):
    """What :func:`export_stages` wrote: the folder, the record count per stage, the files."""

    out_dir: str
    format: str
    counts: dict
    files: list = internal_field(default_factory=list)

    def summary(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        return f"StageExport ({self.format}) in {self.out_dir}: {counts}"


_REAL_NOTE = """WQA-Real is left empty on purpose.

WMarkGPT's third stage trains on real watermarked images with human-like visibility scores and
GPT-written descriptions (2,000 train / 500 test in the authors' release). A generator cannot make
them. To run stage 3, put the authors' playground/WQA-Real/train.json (Apache-2.0, from
TanSongBai/WMarkGPT) and its images here, or your own real images in the same schema:
image, id, gt_score, visibility, conversations[human, gpt].
"""


def _real_records(path: Path) -> int | None:
    """How many records a user's ``WQA-Real/train.json`` holds (0 when it is not a JSON list);
    None when there is none, or it is the empty list an export writes."""
    try:
        records = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # not readable as JSON: still the user's file
        return 0
    if records == []:
        return None
    return len(records) if isinstance(records, list) else 0


def _png(image: np.ndarray) -> Callable[[Path], None]:
    """What writes ``image`` as a PNG at the path it is given (a staged name: not ``.png``)."""

    def write(path: Path) -> None:
        from PIL import Image

        Image.fromarray(image).save(path, format="PNG")

    return write


def export_stages(
    dataset: Any,
    out_dir: str | os.PathLike,
    format: str = "llava",
    *,
    position: PositionLite | None = None,
    n_position: int | None = None,
    describer: Callable[..., str] | None = None,
    random_state: int = 0,
) -> StageExport:
    """Write WMarkGPT's three stage datasets under ``out_dir`` in the authors' JSON schema.

    Parameters
    ----------
    dataset : WatermarkDataset
        The synthetic stage (from :func:`~trustlab.watermark.synth.synthesize`).
    out_dir : path
        Created if needed; gets ``WQA-Position/``, ``WQA-Synthetic/`` and ``WQA-Real/``, each
        with ``train.json`` and ``images/``; the structured blocks go to ``structured.json``
        next to ``train.json`` (the authors' schema has no place for them). A
        ``WQA-Real/train.json`` already there that is not an empty list (real data the user put
        there, as its README asks) is kept as it is, and counted. Over an earlier export, every
        file is written whole aside first and the ``train.json`` files last: stopped while
        writing, the earlier export is as it was; never an earlier ``train.json`` beside new
        images.
    format : {"llava"}
        LLaVA-style conversations with mPLUG-Owl2's ``<|image|>`` token, as the authors' files.
    position : PositionLite or None
        The position stage; by default ``position_lite(n_position or len(dataset), random_state)``.
    describer : callable or None
        Passed to :meth:`~trustlab.watermark.synth.WatermarkDataset.records`.
    random_state : int
        Seed of the questions and descriptions.

    Returns
    -------
    StageExport
    """
    from trustlab.watermark.synth import WatermarkDataset

    if not isinstance(dataset, WatermarkDataset):
        raise InputError.bad("dataset", "a WatermarkDataset", dataset)
    if format != "llava":
        raise InputError.bad("format", "'llava'", format)
    seed = check_int_seed(random_state)
    if position is not None and not isinstance(position, PositionLite):
        raise InputError.bad("position", "None or a PositionLite", position)
    if n_position is not None and (
        isinstance(n_position, bool)
        or not isinstance(n_position, (int, np.integer))
        or n_position < 1
    ):
        raise InputError.bad("n_position", "None or a positive int", n_position)
    synthetic = dataset.records(describer=describer, random_state=seed)
    if position is None:
        position = position_lite(int(n_position or len(dataset)), seed, size=dataset.size)
    root = Path(out_dir)
    files: list[str] = []
    counts: dict[str, int] = {}
    stages = {
        "WQA-Position": (position.records, position.images),
        "WQA-Synthetic": (synthetic, dataset.images),
        "WQA-Real": ([], None),
    }
    staged: dict[str, Any] = {}  # stage files, relative to root
    descriptions: dict[str, str] = {}  # each stage's train.json (what marks an export in --out)
    for stage, (records, images) in stages.items():
        folder = root / stage
        if stage == "WQA-Real" and (kept := _real_records(folder / "train.json")) is not None:
            counts[stage] = kept  # the user's real data: never replaced by an empty list
            continue
        (folder / "images").mkdir(parents=True, exist_ok=True)
        plain = [{k: v for k, v in r.items() if k != "structured"} for r in records]
        for r, image in zip(records, images if images is not None else [], strict=True):
            staged[f"{stage}/images/{r['image']}"] = _png(image)
            files.append(str(folder / "images" / r["image"]))
        if records:
            structured = [{"image": r["image"], **r["structured"]} for r in records]
            side = "structured.json"
            staged[f"{stage}/{side}"] = json.dumps(structured, indent=1)
        else:
            side = "README.txt"
            staged[f"{stage}/{side}"] = _REAL_NOTE
        descriptions[f"{stage}/train.json"] = json.dumps(plain, indent=4, ensure_ascii=False)
        files += [str(folder / "train.json"), str(folder / side)]
        counts[stage] = len(records)
    # review 67: each stage's earlier train.json was removed before its images were rewritten
    # in place, so an export stopped there lost the earlier one. Now every file is written whole
    # aside first; then the earlier train.json files go, the files are renamed into place and
    # the train.json files written last: never an earlier train.json beside new images
    replace_saved(root, staged, descriptions)
    return StageExport(out_dir=str(root), format=format, counts=counts, files=files)
