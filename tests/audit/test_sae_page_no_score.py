"""The SAE page's means table says how many latents have no score of a method and why
(``means[m]["no_score"]``, reason -> count): it showed only how many were scored."""

import numpy as np

from trustlab.audit.sections.sae import build_page
from trustlab.interpret.sae.report import no_score_reason, sae_report
from trustlab.report import Table


def _rows():
    """8 latents; detection has no true score for latents 1 and 2 (examples shown, none of them
    non-activating: the latent fires everywhere) and 3 (nothing shown)."""
    rng = np.random.default_rng(0)
    rows = []
    for latent in range(8):
        for shuffled in (False, True):
            row = {"latent": latent, "shuffled": shuffled, "explanation": f"x{latent}{shuffled}",
                   "detection": float(rng.random()), "embedding": float(rng.random())}  # fmt: skip
            if not shuffled and latent in (1, 2, 3):
                row["detection"] = None
            if not shuffled and latent in (1, 2):
                row["detection_examples"] = {"quantiles": [0, 3, 5], "predicted": [1, 0, 1]}
            rows.append(row)
    return rows


def test_the_means_table_says_which_latents_have_no_score_and_why():
    report = sae_report(_rows())
    everywhere, other = no_score_reason([0, 3, 5]), no_score_reason(None)
    assert report.means["detection"]["no_score"] == {everywhere: 2, other: 1}
    page = build_page(report)
    table = next(b for b in page.sections[0].blocks if isinstance(b, Table))
    why = table.columns.index("latents without a score (why)")
    cells = {row[0]: (row[1], row[why]) for row in table.rows}
    assert cells == {
        "detection": (5, f"2 ({everywhere}); 1 ({other})"),
        "embedding": (8, "none"),
    }


def test_a_bound_of_floating_point_noise_is_shown_as_zero():
    # a difference whose resamples were all 0 had the bound 1.85e-17, shown as "1.85e-17"
    from trustlab.report.render import format_cell

    report = sae_report(_rows())
    report.means["embedding"]["difference_interval"] = [1.85e-17, 0.25]
    table = next(b for b in build_page(report).sections[0].blocks if isinstance(b, Table))
    row = next(r for r in table.rows if r[0] == "embedding")
    assert [format_cell(c) for c in row[-2:]] == ["0.0000", "0.2500"]
    assert report.means["embedding"]["difference_interval"][0] == 1.85e-17  # data unchanged
