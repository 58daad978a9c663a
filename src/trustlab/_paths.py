"""Where trustlab keeps what it builds once and reuses (converted model weights, corpora):
one cache root for every package; and the file-name piece made from a column's name."""

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


def file_part(name: str, max_bytes: int = 100) -> str:
    """``name`` as a piece of a file name: characters other than letters, digits, ``-``, ``_`` and
    ``.`` become ``_``, cut to ``max_bytes`` UTF-8 bytes (never inside a character): a file name may have 255, and
    the atomic write's temporary file adds a dot, a random part and the suffix around the name (a
    293-character column name, a survey question, made an OSError 'File name too long').

    >>> file_part("age (years)")
    'age__years_'
    >>> len(file_part("é" * 200).encode())
    100
    """
    part = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    return part.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
