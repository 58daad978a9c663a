"""Context ablation names: odd values of ``ablate`` (second review)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import ablate_context, judge_prompt
from trustlab.safety.context.data import check_ablate

CONTEXT = {"sender": {"platform_type": "web"}, "recipient": {"type": "student"}}


@pytest.mark.parametrize("value", [True, 1, 1.5, {"sender": 1}, b"sender"])
def test_an_ablate_that_is_no_text_or_list_is_an_input_error_naming_ablate(value):
    # inspect reads -T ablate=true / ablate=1 as YAML: a bool or an int reaches the task
    with pytest.raises(InputError, match=r"^ablate: expected CI group or key names"):
        check_ablate(value)
    with pytest.raises(InputError, match=r"^ablate: "):
        ablate_context(CONTEXT, value)
    with pytest.raises(InputError, match=r"^ablate: "):
        judge_prompt("q?", CONTEXT, "binary", ablate=value)


def test_lists_and_text_still_name_the_same_removals():
    assert check_ablate(["sender", "recipient"]) == check_ablate("sender, recipient")
    assert ablate_context(CONTEXT, ("recipient",)) == {"sender": {"platform_type": "web"}}


def test_one_ablation_has_one_name_however_it_is_written():
    # the casebench task records check_ablate's names in the log; the report groups logs by them
    assert check_ablate("recipient,sender") == ("sender", "recipient")
    assert check_ablate("sender,recipient,sender") == ("sender", "recipient")
    assert check_ablate(["confidentiality", "transmission_principle"]) == (
        "transmission_principle",
        "confidentiality",
    )
