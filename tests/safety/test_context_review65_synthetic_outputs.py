"""make_synthetic_outputs checks its arguments (review 65).

model="safe_rate" overwrote every record's human share with the judge's verdict (the written
file then failed to load, blaming safe_rate); failure_rate 2 or -1 and model "" or 5 were
accepted; skill NaN, text skill or failure_rate and a list of records gave raw ValueError,
TypeError, UFuncTypeError and AttributeError.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import make_synthetic_outputs, synthetic_casebench

DATA = synthetic_casebench()


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"model": "safe_rate"}, "model"),
        ({"model": ""}, "model"),
        ({"model": 5}, "model"),
        ({"skill": float("nan")}, "skill"),
        ({"skill": "2"}, "skill"),
        ({"failure_rate": 2}, "failure_rate"),
        ({"failure_rate": -1}, "failure_rate"),
        ({"failure_rate": "x"}, "failure_rate"),
        ({"dataset": DATA.records()}, "dataset"),
    ],
)
def test_bad_arguments_are_refused(kwargs, argument):
    kwargs = {"dataset": DATA, "mode": "score", **kwargs}
    with pytest.raises(InputError, match=rf"^{argument}: expected "):
        make_synthetic_outputs(**kwargs)


def test_records_keep_their_fields():
    records = make_synthetic_outputs(DATA, "binary", failure_rate=1.0)
    assert [r["safe_rate"] for r in records] == DATA.safe_rate.tolist()
    assert {r["toy-judge"] for r in records} == {""}
