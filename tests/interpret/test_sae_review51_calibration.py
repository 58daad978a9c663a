"""``sae report`` of an intervention run said nothing when a latent's strength never reached the
calibration's KL target (``intervention_calibrated`` false in the rows, as ``sae score``
writes them since c153e10): its score of about 0 entered the means and the page as if
calibrated. The report now counts those latents (``means["intervention"]["uncalibrated"]``)
and its summary and page say so."""

from __future__ import annotations

import html

import pytest

from trustlab.audit.sections.sae import write_page
from trustlab.errors import InputError
from trustlab.interpret import sae_report


def _rows(calibrated):
    rows = []
    for i, ok in enumerate(calibrated):
        for control in (False, True):
            rows.append({"latent": i, "shuffled": control, "explanation": f"e{(i + control) % 3}",
                         "intervention": 0.0 if ok is False else 0.3 + 0.1 * i,
                         "intervention_calibrated": ok})  # fmt: skip
    return rows


def test_the_report_counts_latents_whose_strength_did_not_calibrate(tmp_path):
    report = sae_report(_rows([True, False, False]), n_bootstrap=50)
    assert report.means["intervention"]["uncalibrated"] == 2
    assert "2 of 3 latents' intervention strength did not reach" in report.summary()
    html_path, _ = write_page(report, tmp_path / "page")
    page = html.unescape(html_path.read_text(encoding="utf-8"))
    assert "2 of 3 latents' intervention strength did not reach" in page


def test_all_calibrated_or_not_recorded_says_nothing():
    for flags in ([True, True, True], [None, None, None]):
        report = sae_report(_rows(flags), n_bootstrap=50)
        assert report.means["intervention"]["uncalibrated"] == 0
        assert "did not reach" not in report.summary()


def test_a_bad_calibration_flag_is_named():
    rows = _rows([True, True])
    rows[0]["intervention_calibrated"] = "no"
    with pytest.raises(InputError, match=r"scores\[0\]\['intervention_calibrated'\]"):
        sae_report(rows, n_bootstrap=50)
