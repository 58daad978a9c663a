"""Exceptions raised by trustlab.

Every error trustlab raises on purpose is a :class:`TrustlabError`. The CLI turns an
:class:`InputError` or :class:`ConfigError` into one line on stderr and exit code 2, any other
:class:`TrustlabError` into exit code 1.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

__all__ = [
    "TrustlabError",
    "InputError",
    "ConfigError",
    "BackendError",
    "ResourceError",
    "describe",
]


class TrustlabError(Exception):
    """Base class of every error trustlab raises on purpose."""


class InputError(TrustlabError, ValueError):
    """An argument has the wrong type, shape or value.

    Build it with :meth:`InputError.bad` so the message always names the argument, what was
    expected and what came.
    """

    def __init__(self, message: str, *, argument: str | None = None):
        super().__init__(message)
        self.argument = argument

    @classmethod
    def bad(cls, argument: str, expected: str, got: Any) -> InputError:
        """``InputError("`alpha`: expected ..., got ...")`` with ``got`` described briefly."""
        return cls(f"{argument}: expected {expected}, got {describe(got)}", argument=argument)


class ConfigError(TrustlabError):
    """The environment or configuration is unusable (a missing optional extra, a bad setting)."""

    @classmethod
    def missing_extra(cls, module: str, extra: str) -> ConfigError:
        return cls(
            f"this feature needs the optional package {module!r}; "
            f"install it with: pip install 'trustlab[{extra}]'"
        )


class BackendError(TrustlabError):
    """A backend (solver, model runtime, remote endpoint) failed."""


class ResourceError(TrustlabError):
    """A resource (file, memory, time budget) is missing or exhausted."""


def describe(value: Any, limit: int = 80) -> str:
    """A short, human-readable description of ``value`` for error messages."""
    shape = getattr(value, "shape", None)
    if shape == () and hasattr(value, "item"):  # a numpy scalar: its value, not "an array"
        value, shape = value.item(), None
    if shape is not None and hasattr(value, "dtype"):
        return f"an array of shape {tuple(shape)} and dtype {value.dtype}"
    if isinstance(value, (str, PurePath)):
        text = repr(str(value))  # a path as the text it was given, not "PosixPath PosixPath(...)"
    else:
        # one line: sklearn reprs span several (a repr escapes the line breaks of its strings)
        text = re.sub(r"\s*\n\s*", " ", repr(value))
        if not isinstance(value, (int, float, bool, type(None))):
            text = f"{type(value).__name__} {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
