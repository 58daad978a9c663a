"""Review 67 (G3): resolve_task with a target whose parent package is missing ('nopkg.sub:fn').

70e56ae5 turns a ModuleNotFoundError into an InputError naming ``task`` when the missing module
is the target's module or a package above it (``module.startswith(exc.name + ".")``). Its tests
cover a missing top-level module and a missing submodule of an existing package, where
``exc.name == module`` in both, so a check without the package branch would pass them; and none
has a missing dependency whose name is a prefix of the module's name without the dot, which a
check written ``module.startswith(exc.name)`` would take for the target's own package.
"""

from __future__ import annotations

import sys

import pytest

from trustlab.errors import InputError
from trustlab.evals import registry
from trustlab.evals.registry import register_task, resolve_task


@pytest.fixture(autouse=True)
def _forget_registrations(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {})


def test_a_missing_parent_package_is_refused_naming_task():
    target = "nopkg_review67_g3.sub:fn"
    register_task("orphan", target)
    with pytest.raises(InputError) as err:
        resolve_task("orphan")
    assert err.value.argument == "task"
    assert repr(target) in str(err.value)
    assert "no module 'nopkg_review67_g3.sub'" in str(err.value)


def test_a_missing_dependency_named_like_the_module_stays_itself(tmp_path, monkeypatch):
    # the module dep_r67_g3x exists; what it imports, dep_r67_g3, is missing: no target mistake
    (tmp_path / "dep_r67_g3x.py").write_text("import dep_r67_g3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "dep_r67_g3x", raising=False)
    register_task("needs", "dep_r67_g3x:fn")
    with pytest.raises(ModuleNotFoundError, match="dep_r67_g3"):
        resolve_task("needs")
