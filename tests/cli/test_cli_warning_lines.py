"""A warning from trustlab's own code reaches the CLI user as one line, 'trustlab: warning: ...';
it was Python's format: the file path and line number, then the source line of the call."""

import subprocess
import sys

SCRIPT = """
import warnings
import trustlab, trustlab.cli.data as data
from trustlab.cli.main import main
real = data.list_datasets
def listing():
    warnings.warn_explicit("9 of 150 texts are longer than the context", UserWarning,
                           trustlab.__file__, 1)
    warnings.warn_explicit("a library's own warning", FutureWarning, "/elsewhere/lib.py", 7)
    return real()
data.list_datasets = listing
main(["data", "list"])
"""


def test_trustlab_warnings_are_one_line_and_others_keep_their_format():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "trustlab: warning: 9 of 150 texts are longer than the context" in lines
    assert not any("__init__.py:1" in line for line in lines)
    assert "/elsewhere/lib.py:7: FutureWarning: a library's own warning" in lines
