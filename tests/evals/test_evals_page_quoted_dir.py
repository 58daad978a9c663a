"""The eval report page's 'inspect view --log-dir' command is shell-quoted (a log folder with a
space was written as two arguments; the terminal summary already quoted it)."""

import shlex
from types import SimpleNamespace

import pytest

from trustlab.audit.sections.evals import build_page
from trustlab.report import Paragraph


@pytest.mark.parametrize("folder", ["/tmp/eval logs", "/tmp/it's", "/tmp/plain"])
def test_the_inspect_view_command_is_one_shell_argument(folder):
    logs = SimpleNamespace(log_dir=folder, logs=[], extras={})
    text = next(b.text for b in build_page(logs).sections[0].blocks if isinstance(b, Paragraph))
    command = text.split("with: ", 1)[1]
    assert shlex.split(command) == ["inspect", "view", "--log-dir", folder]
