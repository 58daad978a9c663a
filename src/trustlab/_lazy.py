"""Lazy public names for packages whose modules pull in heavy libraries."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_names(
    package: str, modules: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], list[str], Callable[[], list[str]]]:
    """A package's public names, each imported from its module on first use.

    ``modules`` maps a module (relative to ``package``, e.g. ``".fastpd"``, or absolute) to the
    public names it defines. Returns the package's ``__getattr__``, ``__all__`` and ``__dir__``::

        __getattr__, __all__, __dir__ = lazy_names(__name__, {".fastpd": ["FastPD"]})
    """
    where = {}
    for module, names in modules.items():
        full = package + module if module.startswith(".") else module
        for name in names:
            where[name] = full

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, list(where), __dir__


def require(module: str, extra: str) -> Any:
    """Import an optional dependency, or raise ConfigError naming the extra that installs it.

    >>> require("math", "dev").sqrt(4.0)
    2.0
    """
    from trustlab.errors import ConfigError

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError.missing_extra(module.split(".")[0], extra) from exc
