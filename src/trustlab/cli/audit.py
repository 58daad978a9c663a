"""CLI commands: placeholder until the module is written."""
import typer

app = typer.Typer(no_args_is_help=True)


def audit() -> None:
    """Placeholder."""
