"""Lazy public names for packages whose modules pull in heavy libraries."""

from __future__ import annotations

import importlib
import importlib.util
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

    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        # the package that is missing may be one the module imports (trustlab.evals.provider
        # needs inspect_ai); one that is there but fails to import is not "to install"
        missing = (getattr(exc, "name", None) or top).split(".")[0]
        if not _installed(missing):
            raise ConfigError.missing_extra(missing, extra) from exc
        raise ConfigError(
            f"the optional package {top!r} could not be imported ({exc}); reinstall it, e.g. "
            f"pip install --force-reinstall 'trustlab[{extra}]'"
        ) from exc


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False
