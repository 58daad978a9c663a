import pytest

from cli_helpers import run_main


@pytest.fixture
def run(capsys):
    """``run(*args)`` runs ``trustlab ARGS`` and returns (exit code, stdout, stderr)."""
    return lambda *args: run_main(args, capsys)
