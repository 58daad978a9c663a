"""Review 61: a policy file that lists a key twice in one object is refused (json.loads kept the
last: "weights": {"r": 1.0, "r": -5.0} gave rule r weight -5, unseen)."""

from __future__ import annotations

import json

import pytest
from one_rule_policy import one_rule_policy

from trustlab._checks import unique_keys
from trustlab.agents import load_policy
from trustlab.errors import InputError

POLICY = json.dumps(one_rule_policy(weights={"r": 1.0}))


def test_a_policy_file_with_a_repeated_key_is_refused(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(POLICY.replace('{"r": 1.0}', '{"r": 1.0, "r": -5.0}'))
    with pytest.raises(InputError, match=r"not valid UTF-8 JSON \(expected each key once in an "):
        load_policy(path)
    path.write_text(POLICY)
    assert load_policy(path).weights == {"r": 1.0}


def test_unique_keys_keeps_order_and_nested_objects():
    text = '{"b": 1, "a": {"x": [1, {"y": 2}]}}'
    assert json.loads(text, object_pairs_hook=unique_keys) == json.loads(text)
    assert list(json.loads(text, object_pairs_hook=unique_keys)) == ["b", "a"]
    with pytest.raises(ValueError, match="got 'y' twice"):
        json.loads('[{"y": 1, "y": 1}]', object_pairs_hook=unique_keys)
