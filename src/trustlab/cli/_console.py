"""The two consoles of the CLI and the one way to tell people something."""

from __future__ import annotations

from rich.console import Console

__all__ = ["console", "err_console", "tell"]

console = Console(soft_wrap=True)  # never break a path or a number across lines
err_console = Console(stderr=True, soft_wrap=True)


def tell(message: str, as_json: bool = False) -> None:
    """A line for people: on stdout, or on stderr when stdout carries ``--json`` output."""
    target = err_console if as_json else console
    target.print(message, highlight=False, markup=False, emoji=False, soft_wrap=True)
