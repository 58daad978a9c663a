"""parse_subtasks on well-formed lists in other conventions (review pass 53).

A proposal numbered with CJK punctuation ('1、', '１．', '（1）', '一、'), circled numbers ('①') or
parenthesised numbers ('(1) ...'), or given as a JSON array of strings (bare, fenced, or the one
array of an object) gave [] and was counted as a failed decomposition.
"""

from __future__ import annotations

import pytest

from trustlab.safety.misuse import parse_subtasks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "1、排序一个列表\n2、合并两个列表\n3、写一个测试",
            ["排序一个列表", "合并两个列表", "写一个测试"],
        ),
        ("１．排序\n２．合并", ["排序", "合并"]),
        ("1） 排序\n2） 合并", ["排序", "合并"]),
        ("（1）排序\n（2）合并", ["排序", "合并"]),
        ("(1) Sort a list\n(2) Merge two lists", ["Sort a list", "Merge two lists"]),
        ("**(1)** Sort a list\n**(2)** Merge two lists", ["Sort a list", "Merge two lists"]),
        ("一、排序\n二、合并\n十一、测试", ["排序", "合并", "测试"]),
        ("① Sort a list\n② Merge two lists", ["Sort a list", "Merge two lists"]),
    ],
)
def test_other_numbering_conventions_are_lists(text, expected):
    assert parse_subtasks(text, 5) == expected


@pytest.mark.parametrize(
    "text",
    [
        '["Sort a list", "Merge two lists"]',
        '```json\n[\n  "Sort a list",\n  "Merge two lists"\n]\n```',
        '{"subtasks": ["Sort a list", "Merge two lists"]}',
    ],
)
def test_a_json_array_of_strings_is_a_list(text):
    assert parse_subtasks(text, 5) == ["Sort a list", "Merge two lists"]


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2, 3]",
        '{"a": ["x"], "b": ["y"]}',  # two arrays: which one is meant is not known
        '"Sort a list"',
        "[" * 100_000,
        "(1)",
        "f(1) is 2",
        "2026、",
    ],
)
def test_other_json_and_prose_give_no_subtasks(text):
    assert parse_subtasks(text, 5) == []


def test_json_is_read_only_when_no_item_is_found():
    text = '1. Sort a list\n```json\n["a", "b"]\n```'
    assert parse_subtasks(text, 5) == ['Sort a list\n```json\n["a", "b"]\n```']
    assert parse_subtasks('["Sort a list", "", "sort a LIST", "Count words"]', 2) == [
        "Sort a list",
        "Count words",
    ]
