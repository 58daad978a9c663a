"""Review 67 (G3): loading the command line (what ``trustlab --help`` pays before it prints) loads no
heavy library. pandas came in at load through trustlab.data.datasets (via the CLI's
trustlab.data.tables re-export) and through the audit package's __init__ (context, table,
models): about 0.3 s of a 0.5 s ``--help``. pandas now loads in the commands that read tables."""

import ast
import subprocess
import sys

HEAVY = ("pandas", "torch", "sklearn", "scipy", "matplotlib")


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; print([m for m in {HEAVY!r} if m in sys.modules])"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return ast.literal_eval(res.stdout.strip())


def test_loading_the_cli_loads_no_heavy_library():
    assert _loaded_after("import trustlab.cli.main") == []


def test_public_names_still_load_pandas_when_used():
    # the lazy audit package still gives its names, and the datasets still read with pandas
    code = (
        "from trustlab.audit import AuditContext, AuditPlan, AuditResult, run_audit; "
        "from trustlab.data import load_dataset; load_dataset('chile').info()"
    )
    assert "pandas" in _loaded_after(code)
