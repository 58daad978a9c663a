"""Help texts read as written: paragraphs reflow to the terminal, examples keep their lines.

Typer's Rich help keeps the single line breaks of every paragraph after the first, so text wrapped
at 100 columns in the source shows at 80 columns as ragged half lines ("Keep the default" / "host
127.0.0.1 ..."). :func:`reflow` joins the lines of each prose paragraph before Typer renders it;
indented lines (examples, tables, file formats) and ``\\b`` paragraphs keep their breaks.
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["reflow", "reflow_app"]


def reflow(text: str) -> str:
    """``text`` with each prose paragraph on one line (see the module docstring)."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for paragraph in paragraphs:
        if paragraph.startswith("\b"):
            out.append(paragraph)
            continue
        lines: list[str] = []
        for line in paragraph.split("\n"):
            joins = (
                lines
                and line.strip()
                and not line[:1].isspace()
                and not lines[-1][:1].isspace()
                and not line.startswith(("- ", "* "))
            )
            if joins:
                lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
            else:
                lines.append(line)
        out.append("\n".join(lines))
    return "\n\n".join(out)


def reflow_app(app: Any) -> None:
    """Reflow the help of every command and group of a Typer app, in place."""
    for command in app.registered_commands:
        text = command.help or inspect.getdoc(command.callback)
        if text:
            command.help = reflow(text)
    for group in app.registered_groups:
        info = group.typer_instance.info
        if group.help:
            group.help = reflow(group.help)
        if isinstance(info.help, str):
            info.help = reflow(info.help)
        callback = info.callback
        if not isinstance(info.help, str) and callback is not None and callback.__doc__:
            info.help = reflow(inspect.getdoc(callback) or "")
        reflow_app(group.typer_instance)
