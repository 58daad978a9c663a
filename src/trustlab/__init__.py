"""trustlab: trustworthy-ML methods as dependable software.

Importing ``trustlab`` is cheap: subpackages (``trustlab.fairness``, ``trustlab.explain`` ...) are
imported on first use, and heavy optional libraries only inside the modules that need them.
"""

from __future__ import annotations

import importlib

from trustlab.errors import BackendError, ConfigError, InputError, ResourceError, TrustlabError

__version__ = "0.1.0"

_SUBPACKAGES = {
    "data",
    "evaluation",
    "explain",
    "fairness",
    "privacy",
    "report",
    "robustness",
    "audit",
    "llm",
    "safety",
    "strategic",
    "federated",
}

__all__ = [
    "__version__",
    "TrustlabError",
    "InputError",
    "ConfigError",
    "BackendError",
    "ResourceError",
    *sorted(_SUBPACKAGES),
]


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"trustlab.{name}")
    raise AttributeError(f"module 'trustlab' has no attribute {name!r}")
