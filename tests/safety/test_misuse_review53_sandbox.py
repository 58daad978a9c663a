"""run_humaneval: the per-run token was a global of the driver's __main__ (review pass 53).

A wrong program could read it with ``import __main__`` and forge the sign that check returned
(write the token to ``check_returned``, then exit): it passed. The token is now a local of the
driver's function.
"""

from __future__ import annotations

from trustlab.safety.misuse.checks import run_humaneval

TEST = "def check(f):\n    assert f(1) == 2\n"
WRONG = "def inc(x):\n    return x\n"


def test_a_program_cannot_import_the_token_and_forge_a_pass():
    forge = "import __main__, os\nopen('check_returned', 'wb').write(__main__.token)\nos._exit(0)\n"
    result = run_humaneval(WRONG + forge, TEST, "inc", timeout=10)
    assert not result.passed and result.status == "failed"


def test_the_driver_module_holds_no_token():
    scan = (
        "import __main__\n"
        "found = [k for k, v in vars(__main__).items() if isinstance(v, bytes)]\n"
        "assert not found, found\n"
    )
    result = run_humaneval("def inc(x):\n    return x + 1\n" + scan, TEST, "inc", timeout=10)
    assert result.passed, result.detail
