"""Review 62: ``from_dict`` of FacetReport, BackdoorCheck, MapFit and SAEFit refuses a
non-mapping with an InputError naming its argument (as UEFLConfig and ProtocolState do); it was a
raw AttributeError ("'str' object has no attribute 'items'") or TypeError ("string indices must
be integers"). The backdoor-model cache, which caught only KeyError and TypeError, crashed with
that AttributeError on a result.json holding a JSON list; it now runs again instead."""

from __future__ import annotations

import json

import pytest

from trustlab.cli.safety_transfer import _cached_backdoor
from trustlab.errors import InputError
from trustlab.interpret.sae.model import SAEFit
from trustlab.safety.polytope.results import FacetReport
from trustlab.safety.transfer.mapping import MapFit
from trustlab.safety.transfer.measures import BackdoorCheck

CASES = [(FacetReport, "data"), (BackdoorCheck, "data"), (MapFit, "values"), (SAEFit, "values")]


@pytest.mark.parametrize("cls, argument", CASES)
@pytest.mark.parametrize("value", ["x", None, [("kind", "linear")], 3])
def test_a_non_mapping_is_refused_naming_the_argument(cls, argument, value):
    expected = rf"^{argument}: expected a mapping written by {cls.__name__}\.to_dict\(\), got "
    with pytest.raises(InputError, match=expected) as caught:
        cls.from_dict(value)
    assert caught.value.argument == argument


def test_a_cached_backdoor_result_that_is_no_mapping_is_not_reused(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    (tmp_path / "settings.json").write_text(json.dumps({"seed": 0, "folder": "model"}))
    (tmp_path / "result.json").write_text('["not", "a", "check"]')
    assert _cached_backdoor(tmp_path, {"seed": 0}, BackdoorCheck) is None
