"""register_task refuses a 'module:function' text that names no module and function (review 67).

Measured on 1b2aaee5: ``register_task("t", ":fn")`` (also ``":"``) was accepted (any text with
a colon) and ``resolve_task("t")`` then stopped on importlib's raw ``ValueError: Empty module
name``; ``".rel:fn"`` on ``TypeError: the 'package' argument is required``; ``"mod:"`` and
``"trustlab.evals.demo:"`` reached the lookup and were refused only when the task ran. And
``"os:path"`` resolved to the module ``os.path`` (not a function), handed on to inspect. Now a
text that is not dotted names, a colon and a name is refused at registration (InputError naming
``task``), and a target that is no function is refused at resolution like a missing one.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.evals import registry
from trustlab.evals.registry import register_task, resolve_task


@pytest.fixture(autouse=True)
def _forget_registrations(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {})


@pytest.mark.parametrize(
    "target", [":fn", ":", ".rel:fn", "mod:", "trustlab.evals.demo:", "a..b:fn", " :fn", "m:f:g"]
)
def test_a_text_that_is_no_module_function_is_refused_at_registration(target):
    with pytest.raises(InputError, match=r"^task: expected an inspect @task function") as info:
        register_task("t", target)
    assert info.value.argument == "task"
    assert "t" not in registry._REGISTERED


@pytest.mark.parametrize(
    ("target", "kind"), [("os:path", "a module"), ("trustlab:__version__", "a str")]
)
def test_a_target_that_is_no_function_is_refused_at_resolution(target, kind):
    register_task("t", target)
    with pytest.raises(InputError, match=rf"is {kind}, not a function") as info:
        resolve_task("t")
    assert info.value.argument == "task"


def test_good_targets_still_register_and_resolve():
    register_task("demo-again", "trustlab.evals.demo:demo")
    assert resolve_task("demo-again").__name__ == "demo"
    register_task("later", "some_package_not_imported_yet.tasks:my_task")  # imports nothing
    assert "later" in registry._REGISTERED
