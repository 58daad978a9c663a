"""The HTML page of an SAE interpretation run (``trustlab interpret sae report --out DIR``).

A standalone page, not a section of the tabular audit: it reads an
:class:`~trustlab.interpret.sae.report.SAEReport` and computes nothing itself. Sections: the
mean scores against the shuffled control, the score histograms, the agreement between scorers,
scores by activation quantile, the best and the worst latents with their held-out contexts
(each token's background as strong as its activation, text escaped), and every latent's scores.
The page and ``report.json`` are written by :class:`trustlab.report.Report`.
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

__all__ = ["build_page", "write_page", "activation_html"]

_COLOUR = "255, 136, 0"  # the highlight's RGB; its alpha is the activation's share


def build_page(
    report: Any, title: str | None = None, meta: Mapping[str, Any] | None = None
) -> Report:
    """The page of an :class:`~trustlab.interpret.sae.report.SAEReport` as a
    :class:`~trustlab.report.Report`; ``meta`` is shown in its header."""
    from trustlab.interpret import SAEReport

    if not isinstance(report, SAEReport):
        raise InputError.bad("report", "an SAEReport (sae_report)", report)
    header = header_meta(meta)
    page = Report(
        title or "SAE latents: explanations and their scores",
        {"latents": report.n_latents, "methods": list(report.methods), **header},
    )
    for section in _sections(report):
        page.add(section)
    return page


def write_page(
    report: Any,
    out_dir: str | os.PathLike,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.json`` of ``report`` into ``out_dir``; return the
    paths."""
    return build_page(report, title, meta).write(out_dir)


def activation_html(
    pieces: Sequence[str], activations: Any, max_activation: float | None = None
) -> Any:
    """One context as HTML: each token a ``<span>`` whose background's opacity is its
    activation over ``max_activation`` (default: the largest here), clipped to [0, 1];
    a token at zero gets no background. Text is escaped; a line break shows as ``↵``.

    Returns a :class:`markupsafe.Markup` string (kept as HTML by the report's templates).

    Examples
    --------
    >>> html = str(activation_html(["a", "<b>"], [0.0, 2.0]))
    >>> html.count("background-color"), "rgba(255, 136, 0, 1.000)" in html, "&lt;b&gt;" in html
    (1, True, True)
    """
    from markupsafe import Markup

    values = np.asarray(activations, dtype=np.float64)
    if values.shape != (len(pieces),):
        raise InputError.bad("activations", f"{len(pieces)} values, one per piece", activations)
    if not all(isinstance(p, str) for p in pieces):
        raise InputError.bad("pieces", "token texts (strings)", pieces)
    top = float(values.max()) if max_activation is None and len(values) else max_activation
    top = 0.0 if top is None or not np.isfinite(top) else float(top)
    spans = []
    for piece, value in zip(pieces, values, strict=True):
        text = piece.replace("\n", "↵")
        level = min(max(value / top, 0.0), 1.0) if top > 0 and np.isfinite(value) else 0.0
        if level > 0:
            spans.append(
                Markup('<span title="{:.4g}" style="background-color: rgba({}, {:.3f})">{}</span>')
                .format(value, Markup(_COLOUR), level, text)
            )  # fmt: skip
        else:
            spans.append(Markup('<span title="0">{}</span>').format(text))
    return Markup(
        '<span class="tokens" style="white-space: pre-wrap; font-family: ui-monospace, '
        'monospace">{}</span>'
    ).format(Markup("").join(spans))


def _fmt(value: Any) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.3f}"


def _span(interval: Any) -> str:
    low, high = interval
    return f"[{_fmt(low)}, {_fmt(high)}]"


def _no_score_cell(no_score: Any) -> str:
    """The latents a method's means leave out and why (``means[m]["no_score"]``), or 'none'."""
    if not no_score:
        return "none"
    return "; ".join(f"{n} ({reason})" for reason, n in no_score.items())


def _nan(value: Any) -> float:
    return float("nan") if value is None else float(value)


_INTRO = (
    "Each latent's explanation was scored on held-out examples, and so was a shuffled "
    "explanation (another latent's) on the same examples: the control of Paulo et al. (ICML "
    "2025). An explanation carries information about its latent only as far as it beats the "
    "shuffled one. Detection and fuzzing give a balanced accuracy ((TPR + TNR) / 2; 0.5 is "
    "chance), the *_auroc rows the AUROC of the scorer's probability of '1', embedding and "
    "surprisal the AUROC of their per-example scores (0.5 is chance). Intervals are 95 % "
    "percentile bootstrap intervals over latents ({n} draws); the difference is paired, latent "
    "by latent."
)
_CORRELATION = (
    "Spearman's rho between two scorers' scores of the same latents (true explanations; "
    "latents where either is missing are left out). Scorers that measure the same thing rank "
    "latents alike."
)
_QUANTILES = (
    "Scores by how strongly each test example activates its latent (bin 0 holds the weakest of "
    "ten equal-count bins). Detection and fuzzing: share of examples answered correctly, pooled "
    "over latents (the non-activating examples are correct when called so). Embedding and "
    "surprisal: mean over latents of the AUROC of one bin's examples against the "
    "non-activating ones."
)
_CONTEXTS = (
    "Test contexts (never shown to the explainer), from the strongest to the weakest; each "
    "token's background is as strong as its activation over the latent's largest in the cache "
    "(hover for the value)."
)


def _shown(*values: Any) -> list[Any]:
    """Means and bounds as shown: rounded to 12 decimals, so a bound of floating-point noise
    (1.85e-17 for a difference whose resamples are all 0) reads 0, not "1.85e-17"."""
    return [round(v, 12) if isinstance(v, float) and math.isfinite(v) else v for v in values]


def _sections(report: Any) -> list[Any]:
    from matplotlib.figure import Figure as MplFigure

    from trustlab.interpret.sae.report import uncalibrated_text

    sections = []
    rows = [
        [m, v["n"], _no_score_cell(v.get("no_score")), *_shown(v["true"], *v["true_interval"]),
         *_shown(v["shuffled"], *v["shuffled_interval"]),
         *_shown(v["difference"], *v["difference_interval"])]
        for m, v in report.means.items()
    ]  # fmt: skip
    columns = ["method", "latents", "latents without a score (why)", "true", "low", "high",
               "shuffled", "low", "high", "true - shuffled", "low", "high"]  # fmt: skip
    figure = MplFigure(figsize=(6.4, 3.8))
    report.plot(ax=figure.add_subplot())
    r = report.means[report.rank_by]
    off = report.means.get("intervention", {}).get("uncalibrated")
    sections.append(
        Section(
            "scores",
            "Explanations against shuffled explanations",
            [
                Paragraph(_INTRO.format(n=report.n_bootstrap)),
                *([Paragraph(uncalibrated_text(off, report.n_latents) + ".")] if off else []),
                Table(
                    columns,
                    rows,
                    caption="Mean score over the latents with a score, with 95 % intervals; "
                    "the latents without one are left out of the means",
                ),
                Figure(figure, "Mean score per method, true against shuffled explanations"),
            ],
            {"means": report.means, "n_latents": report.n_latents, "methods": report.methods},
            summary=f"{report.n_latents} latents; {report.rank_by}: true {_fmt(r['true'])} "
            f"{_span(r['true_interval'])}, shuffled {_fmt(r['shuffled'])}, difference "
            f"{_fmt(r['difference'])} {_span(r['difference_interval'])}.",
        )
    )
    figure = report.histograms()
    sections.append(
        Section(
            "histograms",
            "Score distributions",
            [Figure(figure, "Per-latent scores of each method, true against shuffled")],
            {
                m: {
                    "true": [x["scores"][m]["score"] for x in report.latents],
                    "shuffled": [x["scores"][m]["shuffled"] for x in report.latents],
                }
                for m in report.methods
            },  # fmt: skip
        )
    )
    if report.correlations:
        rows = [[c["a"], c["b"], c["rho"], c["p_value"], c["n"]] for c in report.correlations]
        sections.append(
            Section(
                "correlations",
                "Agreement between scorers",
                [
                    Paragraph(_CORRELATION),
                    Table(["method", "method", "Spearman rho", "p-value", "latents"], rows),
                ],
                {"spearman": report.correlations},
            )  # fmt: skip
        )
    sections.append(_quantile_section(report))
    for kind, chosen in (("best", report.best), ("worst", report.worst)):
        sections.append(_latent_section(report, kind, chosen))
    blocks: list = []
    for m in report.methods:
        rows = [
            [x["latent"], x["explanation"], s["score"], *s["interval"], s["shuffled"],
             *s["shuffled_interval"], x["shuffled_explanation"] or ""]
            for x in report.latents
            for s in [x["scores"][m]]
        ]  # fmt: skip
        blocks.append(
            Table(
                [
                    "latent",
                    "explanation",
                    m,
                    "low",
                    "high",
                    "shuffled",
                    "low",
                    "high",
                    "shuffled explanation",
                ],
                rows,
                caption=f"{m}: each latent's score with its 95 % bootstrap interval over "
                "examples, beside the shuffled explanation's",
            )  # fmt: skip
        )
    sections.append(Section("latents", "Every latent", blocks, {"latents": report.latents}))
    return sections


def _quantile_section(report: Any) -> Any:
    from matplotlib.figure import Figure as MplFigure

    if not report.by_quantile:
        text = (
            "The score rows hold no per-example answers (written by an earlier `sae score`), "
            "so scores by activation quantile cannot be shown."
        )
        return Section("quantiles", "Scores by activation quantile",
                       [Paragraph(text, "note")], {})  # fmt: skip
    blocks: list = [Paragraph(_QUANTILES)]
    figure = MplFigure(figsize=(6.4, 3.8))
    ax = figure.add_subplot()
    for k, (m, found) in enumerate(report.by_quantile.items()):
        rows = [
            [str(q), t, s, n]
            for q, t, s, n in zip(found["quantiles"], found["true"], found["shuffled"],
                                  found["n"], strict=True)
        ]  # fmt: skip
        unit = "examples" if found["measure"] == "accuracy" else "latents"
        blocks.append(Table(["quantile", f"{found['measure']}, true", "shuffled", unit], rows,
                            caption=f"{m}: {found['measure']} by activation quantile"))  # fmt: skip
        levels = [i for i, q in enumerate(found["quantiles"]) if q != "non-activating"]
        x = [found["quantiles"][i] for i in levels]
        ax.plot(x, [_nan(found["true"][i]) for i in levels], "o-", color=f"C{k}", label=m)
        ax.plot(x, [_nan(found["shuffled"][i]) for i in levels], "o--", color=f"C{k}",
                alpha=0.5, label=f"{m}, shuffled")  # fmt: skip
    ax.axhline(0.5, color="grey", linewidth=0.8)
    ax.set_xlabel("activation quantile (0 = weakest)")
    ax.set_ylabel("accuracy or AUROC")
    ax.legend(fontsize=8)
    blocks.append(Figure(figure, "Scores by activation quantile (dashed: shuffled)"))
    return Section("quantiles", "Scores by activation quantile", blocks,
                   {"by_quantile": report.by_quantile})  # fmt: skip


def _latent_section(report: Any, kind: str, chosen: tuple[int, ...]) -> Any:
    from markupsafe import Markup

    by = {x["latent"]: x for x in report.latents}
    blocks: list = [Paragraph(_CONTEXTS)] if report.contexts else []
    for latent in chosen:
        x = by[latent]
        scores = "; ".join(
            f"{m} {_fmt(s['score'])} {_span(s['interval'])} (shuffled {_fmt(s['shuffled'])})"
            for m, s in x["scores"].items()
        )
        blocks.append(Paragraph(f"Latent {latent}: \u201c{x['explanation']}\u201d. {scores}."))
        for context in report.contexts.get(latent, []):
            html = activation_html(context["tokens"], context["activations"],
                                   context["max_activation"])  # fmt: skip
            # Markup stays HTML in the report's template; activation_html escaped the text
            blocks.append(Paragraph(Markup(html)))
    if not chosen:
        blocks.append(Paragraph(f"No latent has a {report.rank_by} score.", "note"))
    title = f"{kind.capitalize()} latents by {report.rank_by}"
    data = {"latents": list(chosen),
            "contexts": {i: report.contexts.get(i, []) for i in chosen}}  # fmt: skip
    return Section(kind, title, blocks, data)
