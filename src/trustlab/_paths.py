"""Where trustlab keeps what it builds once and reuses (converted model weights, corpora):
one cache root for every package."""

from __future__ import annotations

import os
from pathlib import Path

from trustlab.errors import InputError


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir``, else ``$TRUSTLAB_CACHE``, else ``~/.cache/trustlab``."""
    if cache_dir is not None:
        if not isinstance(cache_dir, (str, os.PathLike)):
            raise InputError.bad(
                "cache_dir", "None or a folder path (str or os.PathLike)", cache_dir
            )
        return Path(cache_dir).expanduser()
    env = os.environ.get("TRUSTLAB_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "trustlab"
