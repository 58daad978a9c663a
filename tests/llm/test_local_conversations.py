"""LocalModel.completions with conversations (system, user, assistant turns) as prompts."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError

CONVERSATION = [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "Name a colour."},
]


def test_a_string_is_the_one_user_turn_conversation(smollm2):
    text = smollm2.completions("Name a fruit.", 5)[0]
    turn = smollm2.completions([[{"role": "user", "content": "Name a fruit."}]], 5)[0]
    assert turn == text


def test_a_conversation_is_rendered_with_the_chat_template(smollm2):
    rendered = smollm2.tokenizer.apply_chat_template(
        CONVERSATION, add_generation_prompt=True, tokenize=False
    )
    as_text = smollm2.completions([rendered], 5, chat=False)[0]
    mixed = smollm2.completions(["Name a colour.", CONVERSATION], 5)
    assert mixed[1].text == as_text.text
    assert smollm2.completions(CONVERSATION, 5)[0].text == as_text.text  # one conversation alone
    assert mixed[0].text == smollm2.completions("Name a colour.", 5)[0].text


def test_conversations_need_chat(smollm2):
    with pytest.raises(InputError, match="prompts: expected strings"):
        smollm2.completions([CONVERSATION], 5, chat=False)
    with pytest.raises(InputError, match="messages"):
        smollm2.completions([[{"role": "user"}]], 5)
