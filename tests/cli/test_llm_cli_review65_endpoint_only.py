"""Review 65: ``llm generate --timeout X`` or ``--api-key K`` without ``--endpoint`` ran the local
model and ignored them (exit 0). Now one line naming the option, exit 2, before any load; the
TRUSTLAB_API_KEY environment variable (set for every command) is still no error."""

from __future__ import annotations

import pytest
from test_llm_cli_review53_order import folder  # noqa: F401 (a fixture: a model folder, no load)

from cli_helpers import one_line


@pytest.mark.parametrize(("option", "value"), [("--timeout", 5), ("--api-key", "sk-secret-1")])
def test_an_endpoint_option_without_endpoint_is_one_line(run, folder, option, value):  # noqa: F811
    code, out, err = run("llm", "generate", "--model", folder, option, value, "ab")
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"trustlab: error: {option}: expected only with --endpoint"), line
    assert "sk-secret-1" not in err and "LOADED" not in err


def test_the_key_from_the_environment_is_no_error(run, folder, monkeypatch):  # noqa: F811
    monkeypatch.setenv("TRUSTLAB_API_KEY", "sk-env")
    code, out, _ = run("llm", "generate", "--model", folder, "ab")
    assert code == 0 and "ba" in out
