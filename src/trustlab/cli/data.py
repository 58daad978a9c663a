"""``trustlab data``: the bundled real datasets."""

from __future__ import annotations

import typer
from rich.table import Table

from trustlab.cli._common import JSON_OPTION_HELP, console, json_text
from trustlab.data import list_datasets, load_dataset
from trustlab.errors import InputError

app = typer.Typer(no_args_is_help=True, help="The real datasets bundled with trustlab.")


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help=JSON_OPTION_HELP)) -> None:
    """List the bundled datasets with their label, protected attributes and licence (tables, then
    graph datasets such as qm9_carbonyl, whose loader the JSON names)."""
    from trustlab.explain.equigx.data import qm9_carbonyl_info

    infos = [*list_datasets(), qm9_carbonyl_info()]
    if as_json:
        typer.echo(json_text(infos), nl=False)
        return
    table = Table(title="Bundled datasets")
    for col in ("name", "rows", "label (classes)", "protected", "licence"):
        table.add_column(col, overflow="fold")  # a long licence wraps, never cut to "…"
    for info in infos:
        table.add_row(
            info["name"],
            str(info["rows"]),
            f"{info['label']} ({len(info['classes'])})",
            ", ".join(info["protected"]),
            info["licence"],
        )
    console.print(table)


@app.command("show")
def show_command(
    name: str = typer.Argument(..., help="Dataset name, e.g. chile."),
    rows: int = typer.Option(5, "--rows", min=0, help="How many rows to print."),
    as_json: bool = typer.Option(False, "--json", help=JSON_OPTION_HELP),
) -> None:
    """Describe one bundled dataset and print its first rows (a graph dataset: its
    description and loader)."""
    from trustlab.explain.equigx.data import qm9_carbonyl_info

    if isinstance(name, str) and name.lower() == "qm9_carbonyl":  # listed by 'data list'
        _show_graph_dataset(qm9_carbonyl_info(), as_json)
        return
    try:
        ds = load_dataset(name)
    except InputError as exc:  # the library names its parameter; the command names NAME
        if exc.argument != "name":
            raise
        message = (
            "NAME" + str(exc)[len("name") :].replace(", got", " or 'qm9_carbonyl', got", 1)
            + " (see 'trustlab data list')"
        )  # fmt: skip
        raise InputError(message, argument="NAME") from None
    if as_json:
        typer.echo(json_text(ds.info()), nl=False)
        return
    info = ds.info()
    lines = [
        f"{ds.name}: {info['rows']} rows. {ds.description}",
        f"label: {ds.label}  classes: {', '.join(info['classes'])}",
        f"protected: {', '.join(ds.protected)}  features: {', '.join(ds.features)}",
        f"source: {ds.source}",
        f"licence: {ds.licence}",
    ]
    if rows:  # --rows 0: the description only
        lines.append(ds.frame.head(rows).to_string(index=False))
    for line in lines:  # plain text: a "[...]" in a description is not Rich markup
        console.print(line, markup=False, highlight=False)


def _show_graph_dataset(info: dict, as_json: bool) -> None:
    """A graph dataset's description: no table rows to print; the loader says how to get it."""
    if as_json:
        typer.echo(json_text(info), nl=False)
        return
    lines = [
        f"{info['name']}: {info['rows']} graphs. {info['description']}",
        f"label: {info['label']}  classes: {', '.join(map(str, info['classes']))}",
        f"node features: {', '.join(info['features'])}",
        f"source: {info['source']}",
        f"licence: {info['licence']}",
        f"loader: {info['loader']}",
    ]
    for line in lines:
        console.print(line, markup=False, highlight=False)
