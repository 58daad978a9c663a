"""The HTML page of a region-sparse evaluation (``trustlab explain regions evaluate --out DIR``).

A standalone page: it reads a :class:`~trustlab.explain.regions.RegionsEvaluation` and computes
nothing but differences of its numbers. Sections: accuracy against the mean kept area (table and
plot), localisation against the ground-truth object with the random same-area control and the
object-area fraction, deletion and insertion fidelity with the random-order control, the
certainty-threshold (delta) ablation, the ablations (covariance off, watershed superpixels) when
those models were evaluated, and the selected regions of a few test images.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from trustlab.errors import InputError
from trustlab.report import Figure, Paragraph, Report, Section, Table
from trustlab.report.builder import header_meta

__all__ = ["build_page", "write_page", "HTML_NAME", "JSON_NAME", "ABLATIONS", "TABLE_TITLES"]

PAGE_NAME = "regions"
HTML_NAME = f"{PAGE_NAME}.html"
JSON_NAME = f"{PAGE_NAME}.json"

#: Shipped model name -> what it changes against ``p2p_dynamic`` (the default ablation rows).
ABLATIONS = {
    "p2p_no_covariance": "covariance off (independent group logits)",
    "p2p_watershed": "watershed superpixels instead of SLIC",
}
#: The reference model the ablation rows are compared with by default.
REFERENCE = "p2p_dynamic"

#: Section id -> the title a reader sees (one table per section, the examples a figure).
TABLE_TITLES = {
    "accuracy": "Accuracy against kept area",
    "localisation": "Localisation of the object",
    "fidelity": "Deletion and insertion fidelity",
    "delta": "Certainty threshold (delta) ablation",
    "ablations": "Ablations: covariance off, watershed superpixels",
    "examples": "Selected regions of a few test images",
}

_ACCURACY = (
    "Each model predicts the test images; a region-sparse (P2P) model sees only the superpixels "
    "its selector keeps, everything else blacked out, so what lies outside cannot change the "
    "prediction. 'mean kept area' is the share of pixels the model saw: 1 for the black box, the "
    "lattice share for Blackbox-Pixel, the selected area for P2P (with dynamic tau, the smallest "
    "level on the 0.05 grid at which the classifier reaches the certainty threshold delta). "
    "'certain' is the share of images whose confidence reached delta."
)
_LOCALISATION = (
    "Precision is |mask and object| / |mask| per image, averaged over the images with a "
    "non-empty mask (the paper's 'mask percentage correct'); IoU is |mask and object| / "
    "|mask or object|; PxAP is the pixel average precision of the soft selection map. The control "
    "is a random set of superpixels of the same area per image: a selection that finds the object "
    "beats it by far, one that ignores it scores about the object-area fraction ({frac:.3f} on "
    "these images). Blackbox-Pixel's lattice is such a selection (no PxAP: it has no scores). "
    "'empty masks' is the share of images whose mask is empty (left out of both precisions); "
    "'random mask empty' the share whose random mask alone came out empty (a kept area below "
    "half of its first region: left out of the random precision only)."
)
_FIDELITY = (
    "Deletion: the most important regions (by the selector's scores) are blacked out until the "
    "deleted area reaches the level, and the classifier predicts again; agreement with its own "
    "prediction on the whole image should fall faster than when random regions are deleted "
    "(lower is better). Insertion: the least important regions are removed until the kept area "
    "falls to the level (higher is better). The selection is not re-run."
)
_DELTA = (
    "With dynamic tau the certainty threshold delta sets how much each image keeps: a higher "
    "delta asks for more certainty and so for more area. Accuracy, mean kept area, mean tau, the "
    "share of images that reached delta and the localisation precision at each threshold."
)
_ABLATIONS = (
    "Models that change one part of P2P, against {ref}: the correlated group logits switched off "
    "(independent relaxed Bernoulli selection) or compact-watershed superpixels instead of SLIC. "
    "Differences are the ablation's value minus {ref}'s, on the same images."
)


def build_page(
    evaluation: Any,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
    *,
    ablations: Mapping[str, str] | None = None,
    reference: str | None = None,
    n_examples: int = 6,
) -> Report:
    """The page of a :class:`~trustlab.explain.regions.RegionsEvaluation` as a
    :class:`~trustlab.report.Report`.

    Parameters
    ----------
    evaluation : RegionsEvaluation
        What :func:`~trustlab.explain.regions.evaluate_regions` returned.
    title : str, optional
    meta : mapping, optional
        Shown in the page header.
    ablations : mapping model name -> what it changes, optional
        The rows of the ablation table (default: the shipped ``p2p_no_covariance`` and
        ``p2p_watershed`` where evaluated); the section is left out when there are none.
    reference : str, optional
        The model the ablations are compared with (default ``p2p_dynamic``).
    n_examples : int
        Test images shown with each P2P model's selected regions.

    Examples
    --------
    >>> try:
    ...     build_page({"accuracy": []})
    ... except InputError as exc:
    ...     print(str(exc)[:49])
    evaluation: expected a RegionsEvaluation (evaluat
    """
    from trustlab.explain.regions import RegionsEvaluation

    if not isinstance(evaluation, RegionsEvaluation):
        raise InputError.bad("evaluation", "a RegionsEvaluation (evaluate_regions)", evaluation)
    header = header_meta(meta)
    names = [r["model"] for r in evaluation.accuracy]
    if ablations is None:
        ablations = {k: v for k, v in ABLATIONS.items() if k in names}
    if not isinstance(ablations, Mapping) or any(k not in names for k in ablations):
        raise InputError.bad("ablations", f"a mapping from evaluated models {names}", ablations)
    reference = REFERENCE if reference is None else reference
    if not isinstance(n_examples, int) or isinstance(n_examples, bool) or n_examples < 1:
        raise InputError.bad("n_examples", "an integer >= 1", n_examples)
    page = Report(
        title or f"Region-sparse classifiers on {evaluation.dataset}",
        {"images": evaluation.n_images, "object_area": round(evaluation.object_fraction, 4),
         **header},
    )  # fmt: skip
    for section in _sections(evaluation, dict(ablations), reference, n_examples):
        page.add(section)
    return page


def write_page(
    evaluation: Any,
    out_dir: str | os.PathLike,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
    **options: Any,
) -> tuple[Path, Path]:
    """Write ``regions.html`` and ``regions.json`` (the page's numbers) into ``out_dir``;
    ``options`` go to :func:`build_page`."""
    return build_page(evaluation, title, meta, **options).write(out_dir, PAGE_NAME)


def _num(value: Any) -> float | None:
    """A number, or None for a missing or NaN value (shown as n/a)."""
    if value is None:
        return None
    value = float(value)
    return None if np.isnan(value) else value


def _diff(a: Any, b: Any) -> float | None:
    a, b = _num(a), _num(b)
    return None if a is None or b is None else a - b


def _sections(ev: Any, ablations: dict[str, str], reference: str, n_examples: int) -> list:
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(5.5, 4.0))
    ev.plot(ax=figure.add_subplot())
    acc = {r["model"]: r for r in ev.accuracy}
    loc = {r["model"]: r for r in ev.localisation}
    top = max(r["accuracy"] for r in ev.accuracy)  # every model at it: a tie named the first only
    best = ", ".join(
        f"{r['model']} (mean kept area {r['mean_kept']:.3f})"
        for r in ev.accuracy
        if r["accuracy"] == top
    )
    sections = [
        Section(
            "accuracy",
            TABLE_TITLES["accuracy"],
            [
                Paragraph(_ACCURACY),
                Table(
                    ["model", "kind", "accuracy", "mean kept area", "mean tau", "certain"],
                    [
                        [
                            r["model"],
                            r["kind"],
                            r["accuracy"],
                            r["mean_kept"],
                            r.get("mean_tau"),
                            r.get("certain"),
                        ]
                        for r in ev.accuracy
                    ],
                    caption=f"{ev.n_images} test images; tau only for P2P models, certain only for "
                    "those with dynamic tau.",
                ),
                Figure(figure, "Accuracy against mean kept area (dotted: the delta ablation)"),
            ],
            {"accuracy": list(ev.accuracy)},
            summary=f"Highest accuracy {top:.3f}: {best}.",
        ),
        Section(
            "localisation",
            TABLE_TITLES["localisation"],
            [
                Paragraph(_LOCALISATION.format(frac=ev.object_fraction) + _no_rows(ev, "loc")),
                Table(
                    [
                        "model",
                        "precision",
                        "random same-area precision",
                        "precision - random",
                        "IoU",
                        "PxAP",
                        "empty masks",
                        "random mask empty",
                    ],
                    [
                        [
                            r["model"],
                            _num(r["precision"]),
                            _num(r.get("random_precision")),
                            _diff(r["precision"], r.get("random_precision")),
                            _num(r["iou"]),
                            _num(r.get("pxap")),
                            r.get("empty_masks"),
                            r.get("random_empty_masks"),
                        ]
                        for r in ev.localisation
                    ],
                    caption=f"Object-area fraction {ev.object_fraction:.3f}: the precision of "
                    "a selection placed without regard to the object.",
                ),
            ],
            {"localisation": list(ev.localisation), "object_fraction": ev.object_fraction},
        ),
        Section(
            "fidelity",
            TABLE_TITLES["fidelity"],
            [
                Paragraph(_FIDELITY + _no_rows(ev, "fid")),
                Table(
                    [
                        "model",
                        "curve",
                        "area",
                        "agreement (importance order)",
                        "agreement (random order)",
                        "importance - random",
                    ],
                    [
                        [r["model"], r["kind"], t, a, b, a - b]
                        for r in ev.fidelity
                        for t, a, b in zip(
                            r["fractions"], r["importance"], r["random"], strict=True
                        )
                    ],
                    caption="Deletion: area deleted, lower agreement is better; insertion: area "
                    "kept, higher agreement is better.",
                ),
            ],
            {"fidelity": list(ev.fidelity)},
        ),
        Section(
            "delta",
            TABLE_TITLES["delta"],
            [
                Paragraph(_DELTA if ev.delta_ablation else _no_delta_rows(ev)),
                Table(
                    [
                        "model",
                        "delta",
                        "accuracy",
                        "mean kept area",
                        "mean tau",
                        "certain",
                        "precision",
                    ],
                    [
                        [
                            r["model"],
                            r["delta"],
                            r["accuracy"],
                            r["mean_kept"],
                            r["mean_tau"],
                            r["certain"],
                            _num(r["precision"]),
                        ]
                        for r in ev.delta_ablation
                    ],
                ),
            ],
            {"delta_ablation": list(ev.delta_ablation)},
        ),
    ]
    if ablations:
        ref_acc, ref_loc = acc.get(reference, {}), loc.get(reference, {})
        rows = []
        for name, change in ablations.items():
            a, m = acc[name], loc.get(name, {})
            rows.append([name, change, a["accuracy"], _diff(a["accuracy"], ref_acc.get("accuracy")),
                         a["mean_kept"], _num(m.get("precision")),
                         _diff(m.get("precision"), ref_loc.get("precision")), _num(m.get("iou")),
                         _num(m.get("pxap"))])  # fmt: skip
        if reference in acc:
            r, m = acc[reference], loc.get(reference, {})
            own = _num(m.get("precision"))  # no precision (every mask empty): no difference
            rows.insert(0, [reference, "reference", r["accuracy"], 0.0, r["mean_kept"], own,
                            None if own is None else 0.0, _num(m.get("iou")),
                            _num(m.get("pxap"))])  # fmt: skip
        sections.append(
            Section(
                "ablations",
                TABLE_TITLES["ablations"],
                [
                    Paragraph(_ABLATIONS.format(ref=reference)),
                    Table(
                        [
                            "model",
                            "change",
                            "accuracy",
                            "accuracy - reference",
                            "mean kept area",
                            "precision",
                            "precision - reference",
                            "IoU",
                            "PxAP",
                        ],
                        rows,
                        caption=(
                            ""
                            if reference in acc
                            else f"The reference {reference} was not evaluated: no differences."
                        ),
                    ),
                ],
                {"ablations": ablations, "reference": reference},
            )
        )
    if ev.explanations:
        sections.append(
            Section(
                "examples",
                TABLE_TITLES["examples"],
                [
                    Figure(
                        _examples(ev.explanations, n_examples),
                        "Each row: one model's selection on the same test images (unselected "
                        "area dimmed; title: predicted class, confidence, kept area)"
                        + _examples_left_out(ev.explanations),
                    )
                ],
                {},
            )
        )
    return sections


#: The most models shown in the examples figure (one row each).
_EXAMPLE_ROWS = 4


def _no_rows(ev: Any, table: str) -> str:
    """A sentence saying why the localisation ("loc") or fidelity ("fid") table is empty."""
    if ev.localisation if table == "loc" else ev.fidelity:
        return ""
    if table == "fid" and any(r["kind"] != "blackbox" for r in ev.accuracy):
        return " No deletion or insertion levels were given: no curves."
    if table == "fid":
        return " No region-sparse (P2P) model was evaluated: the curves need a selector's scores."
    return " No model with a selection was evaluated: a black box on whole images has no mask."


def _no_delta_rows(ev: Any) -> str:
    """Why the delta ablation has no rows: no dynamic-tau model, or no thresholds were given."""
    if any(r["kind"] == "dynamic" for r in ev.accuracy):
        return ("No certainty thresholds were given (deltas empty, --deltas none): the ablation "
                "was not run.")  # fmt: skip
    return "No dynamic-tau model was evaluated."


def _examples_left_out(explanations: Mapping[str, Any]) -> str:
    """The caption's note on the models beyond the figure's rows ('' when every one is shown)."""
    rest = list(explanations)[_EXAMPLE_ROWS:]
    return f"; not shown: {', '.join(rest)}" if rest else ""


def _examples(explanations: Mapping[str, Any], n_examples: int) -> Any:
    from matplotlib.figure import Figure as MplFigure

    shown = list(explanations.items())[:_EXAMPLE_ROWS]
    k = min(n_examples, min(len(r) for _, r in shown))
    figure = MplFigure(figsize=(1.7 * k, 2.0 * len(shown)))
    axes = figure.subplots(len(shown), k, squeeze=False)
    for row, (name, r) in enumerate(shown):
        for i in range(k):
            ax = axes[row][i]
            ax.imshow(r.overlay(i))
            ax.set_title(
                f"{r.labels[i]} {r.confidence[i]:.2f}\nkept {r.kept_fraction[i]:.0%}", fontsize=7
            )
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_ylabel(name, fontsize=8)
    return figure
