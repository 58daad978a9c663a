"""Renamed keywords: the old name keeps working for one release, with a FutureWarning; and
saved files written under old key names still load (:func:`renamed_keys`)."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Mapping
from typing import Any

from trustlab.errors import InputError

__all__ = ["renamed_attribute", "renamed_keys", "renamed_keyword"]


def renamed_keyword(old: str, new: str):
    """Decorator: ``old=`` is the deprecated name of the keyword ``new=`` (kept for one release).

    ``old=`` warns (FutureWarning, "old is deprecated; use new") and passes its value on as
    ``new=``; giving both (``new`` by keyword or by position) is an InputError naming ``old``.
    The signature shows ``new`` only.
    """

    def decorate(fn):
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        names = [p.name for p in inspect.signature(fn).parameters.values() if p.kind in positional]
        position = names.index(new) if new in names else None

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                if new in kwargs or (position is not None and len(args) > position):
                    raise InputError(
                        f"{old}: expected {new} only ({old} is its deprecated name), got both",
                        argument=old,
                    )
                warnings.warn(f"{old} is deprecated; use {new}", FutureWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def renamed_attribute(old: str, new: str) -> property:
    """A read-only property ``old``, the deprecated name of the attribute ``new`` (one release):
    reading it warns (FutureWarning, "old is deprecated; use new") and gives ``new``'s value."""

    def read(self):
        warnings.warn(f"{old} is deprecated; use {new}", FutureWarning, stacklevel=2)
        return getattr(self, new)

    return property(read, doc=f"Deprecated name of ``{new}``.")


def renamed_keys(values: Mapping[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    """``values`` (a saved file's mapping) with each old key of ``renames`` (old -> new) under
    its new name; where both are present the new one's value is kept. The old keys are dropped."""
    out = {key: value for key, value in values.items() if key not in renames}
    for old, new in renames.items():
        if old in values and new not in out:
            out[new] = values[old]
    return out
