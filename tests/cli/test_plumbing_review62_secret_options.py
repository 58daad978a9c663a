"""Review 62: an option given twice is refused without showing secrets. The usage error quoted
both values: ``--api-key`` keys in full, ``--endpoint`` URLs with their ``user:password@`` and
their ``?api_key=...`` query."""

from __future__ import annotations

import click
import pytest
import typer

from trustlab.cli.main import _refuse_repeated_options, app

GENERATE = ["llm", "generate", "--model", "m"]


@pytest.fixture(scope="module")
def root():
    return typer.main.get_command(app)  # 0.6 s to build: once for the module


def _refusal(root, args: list[str]) -> str:
    with pytest.raises(click.UsageError) as exc:
        _refuse_repeated_options(root, [*GENERATE, *args, "hi"])
    return exc.value.message


def test_an_endpoint_given_twice_is_shown_without_credentials_or_query(root):
    message = _refusal(
        root,
        ["--endpoint", "http://user:s3cret@host:8000/v1", "--endpoint=http://h2/v1?api_key=sk-9"],
    )
    assert message == (
        "Option '--endpoint' was given twice ('http://***@host:8000/v1', then 'http://h2/v1?***'); "
        "give it once."
    )


@pytest.mark.parametrize("command", [["llm", "generate"], ["llm", "serve"]])
def test_an_api_key_given_twice_is_not_shown(root, command):
    with pytest.raises(click.UsageError) as exc:
        _refuse_repeated_options(root, [*command, "--api-key", "sk-AAA", "--api-key=sk-BBB"])
    assert exc.value.message == "Option '--api-key' was given twice (values hidden); give it once."


def test_other_values_are_still_quoted(root):
    assert "('3', then '4')" in _refusal(root, ["--max-new-tokens", "3", "--max-new-tokens", "4"])
