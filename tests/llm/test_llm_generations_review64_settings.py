"""Review 64: generate_texts checked max_new_tokens, chat, temperature and batch_size only for a
model given by name; with a model object of one's own that ignores them, 5.7 tokens were recorded
as 5, True as 1 and temperature 5 as 5.0 in the result. They are now checked for every model,
before it is called."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.llm import generate_texts


class _Shout:
    name = "shout"
    calls = 0

    def generate(self, prompts, max_new_tokens=64, **settings):
        type(self).calls += 1
        return [p.upper() for p in prompts]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_new_tokens": 5.7}, "max_new_tokens"),
        ({"max_new_tokens": True}, "max_new_tokens"),
        ({"temperature": 5}, "temperature"),
        ({"chat": "yes"}, "chat"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_settings_are_checked_for_a_model_object(kwargs, name):
    _Shout.calls = 0
    with pytest.raises(InputError, match=f"^{name}: expected"):
        generate_texts(_Shout(), ["hi"], **kwargs)
    assert _Shout.calls == 0
    result = generate_texts(_Shout(), ["hi"], 3, temperature=0.5)
    assert (result.max_new_tokens, result.temperature, result.texts) == (3, 0.5, ("HI",))
