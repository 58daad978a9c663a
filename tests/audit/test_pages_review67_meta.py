"""The page builders refuse a ``meta`` that is no dict the way Report does (review 67).

Five page builders (EquiGX, regions, SAE, guardrail, watermark contact sheet and evaluation page)
merged ``dict(meta or {})`` into their own header entries before Report saw ``meta``: measured on
1b2aaee5, ``meta='abc'`` stopped there on Python's ``ValueError: dictionary update sequence
element #0 has length 1; 2 is required`` (``meta=5``: ``TypeError``), while ``Report('t',
'abc')`` gave ``InputError: meta: expected a dict of header entries or None``. Now one check,
``trustlab.report.builder.header_meta``, serves Report and the six builders, right after their
main argument's type check.

The builders are given an empty instance of their result class (no fields): the meta check
comes before any field is read, so the test needs no model or evaluation.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.report import Report


def _builders():
    from trustlab.agents import GuardrailEvaluation
    from trustlab.audit.sections import equigx, guardrail, regions, sae, watermark
    from trustlab.explain.regions import RegionsEvaluation
    from trustlab.interpret import SAEReport
    from trustlab.watermark.evaluation import PredictorEvaluation
    from trustlab.watermark.nr import WatermarkPredictions

    def bare(cls):
        return object.__new__(cls)  # the class check passes; no field exists

    builders = {
        "guardrail": lambda meta: guardrail.build_page(bare(GuardrailEvaluation), meta=meta),
        "regions": lambda meta: regions.build_page(bare(RegionsEvaluation), meta=meta),
        "sae": lambda meta: sae.build_page(bare(SAEReport), meta=meta),
        "watermark sheet": lambda meta: watermark.build_contact_sheet(
            bare(WatermarkPredictions), [], [], [], meta=meta
        ),
        "watermark evaluation": lambda meta: watermark.build_evaluation_page(
            bare(PredictorEvaluation), meta=meta
        ),
    }
    try:
        from trustlab.explain.equigx import ExplanationEvaluation
    except ImportError:  # the graph extra (torch, e3nn) is not installed
        return builders
    builders["equigx"] = lambda meta: equigx.build_page(bare(ExplanationEvaluation), meta=meta)
    return builders


@pytest.mark.parametrize("meta", ["abc", 5, [1, 2], [("a", 1, 2)]], ids=repr)
def test_every_page_builder_refuses_meta_as_report_does(meta):
    with pytest.raises(InputError, match=r"^meta: expected a dict of header entries or None"):
        Report("t", meta)
    builders = _builders()
    assert len(builders) >= 5
    for name, build in builders.items():
        with pytest.raises(InputError, match=r"^meta: expected a dict") as info:
            build(meta)
        assert info.value.argument == "meta", name


def test_header_meta_reads_what_report_read():
    from trustlab.report.builder import header_meta

    assert header_meta(None) == {} and header_meta({}) == {}
    assert header_meta({"a": 1}) == {"a": 1}
    assert header_meta([("a", 1), ("b", np.int64(2))]) == {"a": 1, "b": 2}
    given = {"a": 1}
    assert header_meta(given) is not given  # a copy: the builders add to it
    assert Report("t", [("model", "m")]).meta["model"] == "m"


def test_a_real_sae_page_refuses_meta_and_keeps_a_good_one():
    from trustlab.audit.sections.sae import build_page
    from trustlab.interpret.sae.report import sae_report

    rows = [
        {"latent": i, "shuffled": s, "explanation": f"x{i}", "detection": 0.1 * i, "embedding": 0.5}
        for i in range(3)
        for s in (False, True)
    ]
    report = sae_report(rows)
    with pytest.raises(InputError, match=r"^meta: expected a dict"):  # was a raw ValueError
        build_page(report, meta="abc")
    page = build_page(report, meta=[("model", "m")])
    assert page.meta["model"] == "m" and page.meta["latents"] == 3
