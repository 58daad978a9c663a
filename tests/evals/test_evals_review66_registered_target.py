"""A task registered as 'module:function' that names nothing importable is an InputError (review 66).

Measured on the old code: ``register_task("y", "trustlab.evals.demo:nofn")`` then
``run_eval("y", "trustlab/smollm2-135m-instruct", log_dir=...)`` raised the raw
``AttributeError: module 'trustlab.evals.demo' has no attribute 'nofn'`` (and
``resolve_task`` did the same), and a missing module (``"nomodule_zz:fn"``) the raw
``ModuleNotFoundError: No module named 'nomodule_zz'``: register_task imports nothing (by
design), so the target is first looked up when the task runs.

Now both are an InputError naming ``task``, with the name, the target and what is missing; a
module that exists but lacks one of its own dependencies keeps its ModuleNotFoundError (that is
no mistake in the target), and a good target resolves as before.
"""

from __future__ import annotations

import sys

import pytest

from trustlab.errors import InputError
from trustlab.evals import registry, run_eval
from trustlab.evals.registry import register_task, resolve_task


@pytest.fixture(autouse=True)
def _forget_registrations(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {})


@pytest.mark.parametrize(
    ("target", "missing"),
    [
        ("trustlab.evals.demo:no_such_function", "the module 'trustlab.evals.demo' has no"),
        ("no_such_module_review66:fn", "no module 'no_such_module_review66'"),
        ("trustlab.evals.no_such_module_review66:fn", "no module 'trustlab.evals.no_such"),
    ],
)
def test_a_target_that_names_nothing_is_refused_naming_task(target, missing):
    register_task("broken", target)
    with pytest.raises(InputError) as err:
        resolve_task("broken")
    assert err.value.argument == "task"
    assert "'broken'" in str(err.value) and repr(target) in str(err.value)
    assert missing in str(err.value)


def test_run_eval_refuses_it_before_a_log_folder_is_made(tmp_path):
    register_task("broken", "trustlab.evals.demo:no_such_function")
    with pytest.raises(InputError) as err:
        run_eval("broken", "trivial/model", log_dir=tmp_path / "logs")
    assert err.value.argument == "task"
    assert not (tmp_path / "logs").exists()


def test_a_missing_dependency_of_a_module_that_exists_stays_itself(tmp_path, monkeypatch):
    (tmp_path / "task_review66_dep.py").write_text("import no_such_dependency_review66\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "task_review66_dep", raising=False)
    register_task("needs", "task_review66_dep:fn")
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_review66"):
        resolve_task("needs")


def test_a_good_target_resolves():
    register_task("demo-again", "trustlab.evals.demo:demo")
    assert resolve_task("demo-again").__name__ == "demo"
