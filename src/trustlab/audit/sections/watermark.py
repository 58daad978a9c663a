"""The HTML pages of ``trustlab watermark``: the contact sheet of ``predict`` and the evaluation
page of ``evaluate``.

Standalone pages built from report blocks; they compute nothing but differences of the numbers
they are given and the pictures of the heatmaps.

- :func:`build_contact_sheet` / :func:`write_contact_sheet` (``contact_sheet.html``): an overview
  table of every image, then one card per image with the image and its predicted box beside the
  heatmap overlay, the estimated numbers (level, score, expected score, content type, cell,
  orientation) and the describer's paragraph.
- :func:`build_evaluation_page` / :func:`write_evaluation_page` (``watermark_evaluation.html``):
  visibility against the controls, location, per kind, invisible-mark detection AUROC and the
  description metrics (BLEU-1, ROUGE-L, level accuracy) of WMarkGPT's Table 1.
- :func:`heatmap_overlay`: an image with its heatmap in red and its box outlined (also the overlay
  PNGs of ``predict``).

Why this module is long: both pages share the overview text, the captions and the table helpers,
and the overlay is what their pictures are made of; split, each part would import the others.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trustlab.errors import InputError
from trustlab.report import Figure, Paragraph, Report, Section, Table
from trustlab.report.builder import header_meta

__all__ = [
    "CONTACT_SHEET_NAME",
    "EVALUATION_NAME",
    "TABLE_TITLES",
    "build_contact_sheet",
    "build_evaluation_page",
    "heatmap_overlay",
    "write_contact_sheet",
    "write_evaluation_page",
]

#: File name (without suffix) of the contact sheet and of the evaluation page.
CONTACT_SHEET_NAME = "contact_sheet"
EVALUATION_NAME = "watermark_evaluation"

#: Section id -> the title a reader sees on the evaluation page.
TABLE_TITLES = {
    "visibility": "Visibility against the controls",
    "location": "Location of the watermark",
    "per_kind": "Visibility per kind of mark",
    "invisible": "Invisible marks: detection AUROC",
    "descriptions": "Description metrics (WMarkGPT Table 1)",
}

_OVERVIEW = (
    "{views} The score is the visibility in [0, 5] (5 invisible, 0 obvious), the mean of the "
    "score head and the expected score{level}; the expected score is the Q-Align-style readout "
    "of the level probabilities (sum p x [5, 4, 3, 2, 1]). 'located' says whether a heatmap cell "
    "reached the threshold ({thr:g}); otherwise the box is the most likely place (the cells "
    "within half of the heatmap's maximum) or none. The paragraphs say only what the predictor "
    "estimated."
)
_VIEWS = {
    True: "Each image and its mirror image were read without a reference image by the "
    "no-reference predictor, and the two readouts averaged.",
    False: "Each image was read without a reference image by the no-reference predictor.",
}
_LEVEL = {
    "score": ", and the level follows from it",
    "level_head": ", clipped into the level head's most probable level, which is the level shown",
}
_VISIBILITY = (
    "Visible marks (logo, text, pattern), whose true score is 5 - 20 w for the opacity w. SRCC "
    "and PLCC of the predicted score against the true score, the exact 5-level accuracy and the "
    "within-one-level accuracy. The controls answer on the same images: always 'invisible', a "
    "random score drawn from the training levels' prior, and a linear model on whole-image "
    "statistics. A predictor that learnt nothing beyond global statistics ties with the last one."
)
_LOCATION = (
    "Visible marks with opacity w >= {w:g}: the share whose predicted box centre falls in the "
    "true 3x3 cell, and the IoU of the thresholded heatmap with the watermark region (both at "
    "the heatmap's resolution of one cell per 8 x 8 pixels). The content-type accuracy is over "
    "every watermarked image. A box placed without regard to the mark hits the right cell about "
    "1 time in 9 (0.111)."
)
_PER_KIND = "The visibility numbers of the first table, per kind of visible mark."
_INVISIBLE = (
    "Detection of invisible marks: the AUROC of 5 - predicted score, watermarked images of one "
    "method and strength against the clean images (0.5: not told apart). Reported without a "
    "gate: weak invisible marks are meant to be hard to see."
)
_NO_INVISIBLE = "No invisible marks, or no clean images to compare them with, in this set."
_DESCRIPTIONS = (
    "The describer's paragraph of the predictor's estimate against the paragraph of the "
    "ground truth (the generator's facts), scored as WMarkGPT scored its Table 1: BLEU-1 and "
    "ROUGE-L of whitespace tokens, and the level parsed exactly from the final sentence 'The "
    "watermark visibility is: L.' (the authors' substring membership test beside it, labelled "
    "as such). Both paragraphs of an image use the same template seed, so the wording differs "
    "only where the facts do. Controls: the ground truth written with other template choices "
    "(the ceiling that wording alone allows) and a constant 'no watermark' paragraph."
)


# ------------------------------------------------------------------------------------ overlay


def heatmap_overlay(
    image: Any, heatmap: Any, box: Sequence[int] | None = None, *, alpha: float = 0.6
) -> np.ndarray:
    """``image`` with ``heatmap`` blended in red and ``box`` outlined in yellow.

    Parameters
    ----------
    image : uint8 array (H, W, 3)
    heatmap : float array (H, W)
        Values in [0, 1] (a predictor's heatmap resized to the image); the red weight of a pixel is
        ``alpha * heatmap``.
    box : (x0, y0, x1, y1) or None
        Pixels, x1/y1 exclusive; None or negative values draw no box.
    alpha : float
        Opacity of the red where the heatmap is 1, in [0, 1].

    Returns
    -------
    uint8 array (H, W, 3)

    Examples
    --------
    >>> img = np.zeros((4, 4, 3), np.uint8)
    >>> heat = np.zeros((4, 4)); heat[0, 0] = 1.0
    >>> out = heatmap_overlay(img, heat, alpha=0.5)
    >>> out[0, 0].tolist(), out[3, 3].tolist()
    ([128, 0, 0], [0, 0, 0])
    """
    img = np.asarray(image)
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise InputError.bad("image", "a uint8 RGB image (H, W, 3)", getattr(img, "shape", img))
    heat = np.asarray(heatmap)  # in its own dtype: a photo's float64 copy is large
    heat = heat if heat.dtype.kind in "fiub" else heat.astype(np.float64)
    if heat.shape != img.shape[:2] or not np.all(np.isfinite(heat)):
        raise InputError.bad("heatmap", f"finite values of shape {img.shape[:2]}", heat.shape)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise InputError.bad("alpha", "a number in [0, 1]", alpha)
    red = np.array([255.0, 0.0, 0.0])
    out = np.empty_like(img)
    for start in range(0, img.shape[0], 256):  # a 95-megapixel photo at once took GBs
        rows = slice(start, start + 256)
        a = alpha * np.clip(heat[rows].astype(np.float64), 0.0, 1.0)[..., None]
        out[rows] = np.rint((1.0 - a) * img[rows] + a * red).astype(np.uint8)
    if box is not None:
        _outline(out, box)
    return out


def _outline(out: np.ndarray, box: Sequence[int]) -> None:
    """Draw ``box`` (x0, y0, x1, y1) in yellow, 2 pixels wide, onto ``out`` in place."""
    try:
        x0, y0, x1, y1 = (int(v) for v in box)
    except (TypeError, ValueError):
        raise InputError.bad("box", "(x0, y0, x1, y1) pixel coordinates", box) from None
    if min(x0, y0, x1, y1) < 0 or x1 <= x0 or y1 <= y0:
        return
    h, w = out.shape[:2]
    x1, y1 = min(x1, w), min(y1, h)
    t = max(1, min(2, x1 - x0, y1 - y0))
    yellow = (255, 220, 0)
    out[y0 : y0 + t, x0:x1] = yellow
    out[y1 - t : y1, x0:x1] = yellow
    out[y0:y1, x0 : x0 + t] = yellow
    out[y0:y1, x1 - t : x1] = yellow


# ------------------------------------------------------------------------------ contact sheet


def _box_or_none(box: Any) -> list[int] | None:
    values = [int(v) for v in box]
    return None if min(values) < 0 else values


def build_contact_sheet(
    predictions: Any,
    images: Sequence[np.ndarray],
    names: Sequence[str],
    descriptions: Sequence[str],
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Report:
    """The contact sheet of a predictor's :class:`~trustlab.watermark.nr.WatermarkPredictions`.

    Parameters
    ----------
    predictions : WatermarkPredictions
        What :meth:`~trustlab.watermark.nr.WatermarkPredictor.predict` returned for ``images``.
    images : sequence of uint8 arrays (H, W, 3)
        The images, in the order of the predictions (any sizes).
    names : sequence of str
        A name per image (its file name), shown as the card's title.
    descriptions : sequence of str
        The describer's paragraph per image.
    title : str, optional
    meta : mapping, optional
        Shown in the page header (the model, the threshold, ...).

    Returns
    -------
    Report
        An overview section, then one section per image (ids ``image-0``, ``image-1``, ...).

    Examples
    --------
    >>> try:
    ...     build_contact_sheet([], [], [], [])
    ... except InputError as exc:
    ...     print(str(exc)[:50])
    predictions: expected a WatermarkPredictions (Wate
    """
    from trustlab.watermark.nr import WatermarkPredictions

    if not isinstance(predictions, WatermarkPredictions):
        raise InputError.bad(
            "predictions", "a WatermarkPredictions (WatermarkPredictor.predict)", predictions
        )
    header = header_meta(meta)
    n = len(predictions)
    for arg, values in (("images", images), ("names", names), ("descriptions", descriptions)):
        try:
            given = len(values)
        except TypeError:  # 5, a generator or a 0-d array: len() raised a bare TypeError
            raise InputError.bad(
                arg, f"a sequence of {n} items, one per prediction", values
            ) from None
        if given != n:
            raise InputError.bad(arg, f"{n} items, one per prediction", given)
    for i, img in enumerate(images):
        shape = tuple(int(s) for s in np.shape(img)[:2])
        if np.ndim(img) != 3 or shape != tuple(predictions.image_sizes[i]):
            raise InputError.bad(
                f"images[{i}]", f"an image of size {predictions.image_sizes[i]}", np.shape(img)
            )
    counts = {lv: predictions.levels.count(lv) for lv in dict.fromkeys(predictions.levels)}
    page = Report(
        title or f"Watermark contact sheet: {n} image{'s' if n != 1 else ''}",
        {"images": n, "threshold": predictions.threshold, **header},
    )
    rows = [_row(predictions, i, str(names[i])) for i in range(n)]
    page.add(
        Section(
            "overview",
            "All images",
            [
                Paragraph(
                    _OVERVIEW.format(
                        thr=predictions.threshold,
                        views=_VIEWS[bool(predictions.flip_average)],
                        level=_LEVEL.get(predictions.level_readout, _LEVEL["score"]),
                    )
                ),
                Table(
                    [
                        "image",
                        "level",
                        "score",
                        "expected score",
                        "content type",
                        "cell",
                        "orientation",
                        "located",
                    ],
                    [
                        [
                            r["image"],
                            r["level"],
                            r["score"],
                            r["expected_score"],
                            r["content_type"],
                            r["cell"],
                            r["orientation"],
                            "yes" if r["located"] else "no",
                        ]
                        for r in rows
                    ],
                ),
            ],
            {"images": rows, "level_counts": counts},
            summary=", ".join(f"{k}: {v}" for k, v in counts.items()),
        )
    )
    for i in range(n):
        page.add(_card(predictions, i, images[i], rows[i], str(descriptions[i])))
    return page


def _row(predictions: Any, i: int, name: str) -> dict[str, Any]:
    return {
        "image": name,
        "level": predictions.levels[i],
        "score": float(predictions.scores[i]),
        "expected_score": float(predictions.expected_scores[i]),
        "content_type": predictions.content_types[i],
        "cell": predictions.cells[i],
        "orientation": predictions.orientations[i],
        "present": bool(predictions.present[i]),
        "located": bool(predictions.located[i]),
        "box": _box_or_none(predictions.boxes[i]),
    }


#: The longest side (pixels) of a card's image: larger ones are shrunk before the box is drawn, or
#: the 2-pixel outline vanished when the card was scaled down (and full-size overlays were slow).
CARD_SIDE = 256


def _shown(
    predictions: Any, i: int, img: np.ndarray, box: list[int] | None
) -> tuple[np.ndarray, np.ndarray, list[int] | None]:
    """Image ``i``, its heatmap (nearest, as ``predictions.heatmap``) and its box at card size."""
    from PIL import Image

    h, w = img.shape[:2]
    scale = CARD_SIDE / max(h, w)
    if scale >= 1.0:
        return img, predictions.heatmap(i), box
    sh, sw = max(1, round(h * scale)), max(1, round(w * scale))
    small = np.asarray(Image.fromarray(img).resize((sw, sh), Image.Resampling.BOX))
    hm = predictions.heatmaps[i].astype(np.float32)
    rows = np.minimum((np.arange(sh) * hm.shape[0]) // sh, hm.shape[0] - 1)
    cols = np.minimum((np.arange(sw) * hm.shape[1]) // sw, hm.shape[1] - 1)
    shown = None if box is None else [int(v * scale) for v in box]
    return small, hm[np.ix_(rows, cols)], shown


def _card(predictions: Any, i: int, image: np.ndarray, row: dict, description: str) -> Section:
    from matplotlib.figure import Figure as MplFigure

    img, heat, box = _shown(predictions, i, np.asarray(image), row["box"])
    framed = img.copy()
    if box is not None:
        _outline(framed, box)
    overlay = heatmap_overlay(img, heat, box)
    h, w = img.shape[:2]
    gap = np.full((h, max(2, w // 64), 3), 255, np.uint8)
    figure = MplFigure(figsize=(2.6, 2.6 * h / (2 * w + gap.shape[1]) + 0.3))
    ax = figure.add_subplot()
    ax.imshow(np.concatenate([framed, gap, overlay], axis=1))
    ax.set_axis_off()
    ax.set_title(f"{row['level']} (score {row['score']:.2f}), {row['content_type']}", fontsize=8)
    located = "located" if row["located"] else "not located at the threshold"
    where = "no box" if box is None else f"box {box}, {row['cell']}, {row['orientation']}"
    return Section(
        f"image-{i}",
        row["image"],
        [
            Figure(figure, f"{row['image']}: the image with the predicted box; the heatmap in red"),
            Table(
                [
                    "level",
                    "score",
                    "expected score",
                    "content type",
                    "cell",
                    "orientation",
                    "located",
                ],
                [
                    [
                        row["level"],
                        row["score"],
                        row["expected_score"],
                        row["content_type"],
                        row["cell"],
                        row["orientation"],
                        "yes" if row["located"] else "no",
                    ]
                ],
            ),
            Paragraph(description),
        ],
        {
            **row,
            "level_probabilities": [float(p) for p in predictions.level_probabilities[i]],
            "description": description,
        },
        summary=f"{row['level']}; {where}; {located}.",
    )


def write_contact_sheet(
    predictions: Any,
    images: Sequence[np.ndarray],
    names: Sequence[str],
    descriptions: Sequence[str],
    out_dir: str | os.PathLike,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``contact_sheet.html`` and ``contact_sheet.json`` (the page's numbers) into
    ``out_dir``; the arguments are those of :func:`build_contact_sheet`."""
    page = build_contact_sheet(predictions, images, names, descriptions, title, meta)
    return page.write(out_dir, CONTACT_SHEET_NAME)


# ---------------------------------------------------------------------------- evaluation page


def _num(value: Any) -> float | None:
    """A number, or None for a missing or NaN value (shown as n/a)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _diff(a: Any, b: Any) -> float | None:
    a, b = _num(a), _num(b)
    return None if a is None or b is None else a - b


def build_evaluation_page(
    evaluation: Any,
    descriptions: Mapping[str, Any] | None = None,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Report:
    """The page of a predictor's evaluation on generated images.

    Parameters
    ----------
    evaluation : PredictorEvaluation
        What :func:`~trustlab.watermark.evaluation.evaluate_predictions` returned.
    descriptions : mapping name -> DescriptionScores, optional
        :func:`~trustlab.watermark.metrics.score_descriptions` of each answer set against the
        ground-truth paragraphs (the first is the predictor's; the others are controls); the
        description section is left out without it.
    title : str, optional
    meta : mapping, optional
        Shown in the page header.

    Returns
    -------
    Report

    Examples
    --------
    >>> try:
    ...     build_evaluation_page({"visibility": {}})
    ... except InputError as exc:
    ...     print(str(exc)[:50])
    evaluation: expected a PredictorEvaluation (evalua
    """
    from trustlab.watermark.evaluation import PredictorEvaluation
    from trustlab.watermark.metrics import DescriptionScores

    if not isinstance(evaluation, PredictorEvaluation):
        raise InputError.bad(
            "evaluation", "a PredictorEvaluation (evaluate_predictions)", evaluation
        )
    header = header_meta(meta)
    try:  # a mapping or pairs, as meta; 'abc' or [1, 2] gave dict()'s raw error
        descriptions = dict(descriptions or {})
    except (TypeError, ValueError):
        raise InputError.bad(
            "descriptions", "a mapping from names to DescriptionScores", descriptions
        ) from None
    if any(not isinstance(v, DescriptionScores) for v in descriptions.values()):
        raise InputError.bad(
            "descriptions", "a mapping from names to DescriptionScores", descriptions
        )
    page = Report(
        title or f"Watermark predictor on {evaluation.n_images} generated images",
        {"images": evaluation.n_images, **header},
    )
    for section in _evaluation_sections(evaluation, descriptions):
        page.add(section)
    return page


def write_evaluation_page(
    evaluation: Any,
    out_dir: str | os.PathLike,
    descriptions: Mapping[str, Any] | None = None,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``watermark_evaluation.html`` and ``watermark_evaluation.json`` into ``out_dir``;
    the arguments are those of :func:`build_evaluation_page`."""
    page = build_evaluation_page(evaluation, descriptions, title, meta)
    return page.write(out_dir, EVALUATION_NAME)


_VIS_COLUMNS = ["SRCC", "PLCC", "exact level accuracy", "within-one-level accuracy", "n"]


def _vis_cells(v: Mapping[str, Any]) -> list:
    return [_num(v["srcc"]), _num(v["plcc"]), v["exact_level_accuracy"],
            v["within_one_level_accuracy"], v["n"]]  # fmt: skip


def _evaluation_sections(ev: Any, descriptions: dict[str, Any]) -> list[Section]:
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(5.5, 3.8))
    ev.plot(ax=figure.add_subplot())
    v = ev.visibility
    rows = [["predictor", *_vis_cells(v), None]]
    for name, c in ev.controls.items():
        rows.append([name, *_vis_cells(c), _diff(v["srcc"], c["srcc"])])
    loc = ev.location
    sections = [
        Section(
            "visibility",
            TABLE_TITLES["visibility"],
            [
                Paragraph(_VISIBILITY),
                Table(
                    ["answer", *_VIS_COLUMNS, "predictor SRCC - this SRCC"],
                    rows,
                    caption="SRCC is undefined (n/a) for a constant answer.",
                ),
                Figure(figure, "SRCC and exact level accuracy: the predictor and the controls"),
            ],
            {"visibility": v, "controls": ev.controls},
            summary=f"Predictor SRCC {_fmt(v['srcc'])}, exact level accuracy "
            f"{v['exact_level_accuracy']:.3f} on {v['n']} visible marks.",
        ),
        Section(
            "location",
            TABLE_TITLES["location"],
            [
                Paragraph(_LOCATION.format(w=ev.min_opacity)),
                Table(
                    [
                        "3x3 cell accuracy",
                        "cell accuracy - chance (1/9)",
                        "heatmap IoU",
                        "content-type accuracy",
                        "marks",
                    ],
                    [
                        [
                            _num(loc["cell_accuracy"]),
                            _diff(loc["cell_accuracy"], 1 / 9),
                            _num(loc["heatmap_iou"]),
                            _num(ev.content_type_accuracy),
                            loc["n"],
                        ]
                    ],
                ),
            ],
            {"location": loc, "content_type_accuracy": ev.content_type_accuracy},
        ),
        Section(
            "per_kind",
            TABLE_TITLES["per_kind"],
            [
                Paragraph(_PER_KIND),
                Table(
                    ["kind", *_VIS_COLUMNS, "3x3 cell accuracy"],
                    [
                        [k, *_vis_cells(p), _num(p.get("cell_accuracy"))]
                        for k, p in ev.per_kind.items()
                    ],
                ),
            ],
            {"per_kind": ev.per_kind},
        ),
        Section(
            "invisible",
            TABLE_TITLES["invisible"],
            [
                Paragraph(_INVISIBLE if ev.invisible_auroc else _NO_INVISIBLE),
                Table(  # with the images each AUROC compared: 1 vs 2 gives 1.000 easily
                    ["method and strength", "AUROC", "AUROC - 0.5", "marked", "clean"],
                    [
                        [k, _num(a), _diff(a, 0.5), *ev.invisible_counts.get(k, (None, None))]
                        for k, a in ev.invisible_auroc.items()
                    ],
                ),
            ],
            {"invisible_auroc": ev.invisible_auroc, "invisible_counts": ev.invisible_counts},
        ),
    ]
    if descriptions:
        first = next(iter(descriptions))
        ref = descriptions[first]
        table_rows = [
            [name, d.bleu1_mean, d.rouge_l_mean, _num(d.accuracy_exact),
             _num(d.accuracy_substring), d.n,
             None if name == first else d.bleu1_mean - ref.bleu1_mean]
            for name, d in descriptions.items()
        ]  # fmt: skip
        sections.append(
            Section(
                "descriptions",
                TABLE_TITLES["descriptions"],
                [
                    Paragraph(_DESCRIPTIONS),
                    Table(
                        [
                            "answers",
                            "BLEU-1",
                            "ROUGE-L",
                            "level accuracy (exact parse)",
                            "level accuracy (substring, authors' compat)",
                            "n",
                            f"BLEU-1 - {first}",
                        ],
                        table_rows,
                    ),
                ],
                {"descriptions": {k: d.to_dict() for k, d in descriptions.items()}},
                summary=f"{first}: BLEU-1 {ref.bleu1_mean:.3f}, ROUGE-L {ref.rouge_l_mean:.3f}.",
            )
        )
    return sections


def _fmt(value: Any) -> str:
    v = _num(value)
    return "n/a" if v is None else f"{v:.3f}"
