"""A policy of one soft rule "ACTION IMPLIES CONDITION", the agents tests' smallest case."""

from __future__ import annotations

from typing import Any


def one_rule_policy(
    action: str = "pay",
    condition: str = "ok",
    rule_id: str = "r",
    logic: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """``action`` guarded by the soft rule ``rule_id`` (``logic``, by default "ACTION IMPLIES
    CONDITION"); ``extra`` adds top-level keys (``weights``, ``unknown_action``)."""
    return {
        "actions": {action: {"soft_rule_ids": [rule_id]}},
        "rule_list": [
            {
                "rule_id": rule_id,
                "predicates": [[action, "", "", "action"], [condition, "", "", "condition"]],
                "logic": logic or f"{action} IMPLIES {condition}",
            }
        ],
        **extra,
    }
