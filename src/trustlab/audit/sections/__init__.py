"""Report sections of ``trustlab audit``.

A section is a module ``trustlab.audit.sections.<name>`` with a function
``build(ctx: AuditContext) -> Section | None`` (None when it does not apply to this audit).
``SECTION_MODULES`` lists them in report order; a module is imported only when its section is
built, so a heavy dependency of one section costs nothing to the others.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from trustlab.errors import InputError

__all__ = ["SECTION_MODULES", "SECTION_MODES", "load_section", "sections_for_mode"]

SECTION_MODULES: list[str] = [
    "overview",
    "fairness",
    "fastpd",
    "anova_tpnn",
    "ranking",
    "participation",
]

#: The audit modes ("zoo", "model", "predictions") in which a section can apply, where not all:
#: anova_tpnn needs training rows, ranking two or more models with probabilities, fastpd a model.
SECTION_MODES: dict[str, tuple[str, ...]] = {
    "fastpd": ("zoo", "model"),
    "anova_tpnn": ("zoo",),
    "ranking": ("zoo",),
}


def sections_for_mode(names: list[str], mode: str) -> list[str]:
    """``names`` without the sections that cannot apply to an audit in ``mode``."""
    return [name for name in names if mode in SECTION_MODES.get(name, (mode,))]


def load_section(name: str) -> ModuleType:
    """Import the section module ``name`` (one of :data:`SECTION_MODULES`)."""
    if name not in SECTION_MODULES:
        raise InputError.bad("sections", "names among " + ", ".join(SECTION_MODULES), name)
    return importlib.import_module(f"{__name__}.{name}")
