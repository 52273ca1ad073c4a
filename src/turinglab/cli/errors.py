"""One-line errors: a command that cannot go on says why on stderr, in one line, and exits 2
(`raise fail(...)`). (`stats` and `itt` print theirs as plain text: their messages may hold
brackets such as `[itt]`, which rich would read as markup.)"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

# Errors are never wrapped: a command to copy must stay on one line.
err_console = Console(stderr=True, soft_wrap=True)


def fail(message: str) -> typer.Exit:
    """`message` is plain text: a name or path such as `x[/]y` is printed as given, never read
    as markup."""
    err_console.print(f"[red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(code=2)
