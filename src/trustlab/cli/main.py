"""Entry point of the ``trustlab`` command: ``trustlab <group> <command>``.

Exit codes: 0 success, 2 bad input (one line on stderr), 1 failure.
"""

from __future__ import annotations

import re
import sys
from typing import Any

try:  # Ctrl-C while the commands load (seconds on a busy machine): one line, as later
    import typer

    from trustlab import __version__
    from trustlab.cli import agents as _agents
    from trustlab.cli import audit as _audit
    from trustlab.cli import data as _data
    from trustlab.cli import evals as _evals
    from trustlab.cli import evaluate as _evaluate
    from trustlab.cli import explain as _explain
    from trustlab.cli import explain_anova as _explain_anova
    from trustlab.cli import explain_equigx as _explain_equigx
    from trustlab.cli import explain_regions as _explain_regions
    from trustlab.cli import fairness as _fairness
    from trustlab.cli import federated as _federated
    from trustlab.cli import governance as _governance
    from trustlab.cli import interpret as _interpret
    from trustlab.cli import llm as _llm
    from trustlab.cli import privacy as _privacy
    from trustlab.cli import robustness as _robustness
    from trustlab.cli import safety as _safety
    from trustlab.cli import safety_context as _safety_context
    from trustlab.cli import safety_transfer as _safety_transfer
    from trustlab.cli import strategic as _strategic
    from trustlab.cli import watermark as _watermark
    from trustlab.cli._common import option_message
    from trustlab.cli._help import reflow_app
    from trustlab.errors import ConfigError, InputError, TrustlabError
except KeyboardInterrupt:  # the console script imports this module before calling main()
    sys.stderr.write("trustlab: interrupted\n")
    raise SystemExit(130) from None

app = typer.Typer(
    name="trustlab",
    help="Trustworthy-ML audits, explanations and checks for your models and data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trustlab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """trustlab: trustworthy-ML methods as dependable software."""


app.command("audit")(_audit.audit)
app.add_typer(_data.app, name="data")
app.add_typer(_fairness.app, name="fairness")
app.add_typer(_evaluate.app, name="evaluate")
_explain.app.add_typer(_explain_anova.app, name="anova-tpnn")
_explain.app.add_typer(_explain_equigx.app, name="equigx")
_explain.app.add_typer(_explain_regions.app, name="regions")
app.add_typer(_explain.app, name="explain")
app.add_typer(_robustness.app, name="robustness")
app.add_typer(_privacy.app, name="privacy")
app.add_typer(_strategic.app, name="strategic")
app.add_typer(_llm.app, name="llm")
app.add_typer(_federated.app, name="federated")
_safety.app.add_typer(_safety_context.app, name="context")
_safety.app.add_typer(_safety_transfer.app, name="transfer")
app.add_typer(_safety.app, name="safety")
app.add_typer(_evals.app, name="eval")
app.add_typer(_interpret.app, name="interpret")
app.add_typer(_agents.app, name="agents")
app.add_typer(_governance.app, name="governance")
app.add_typer(_watermark.app, name="watermark")
reflow_app(app)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn every error into one clear line on stderr and an exit code.

    Exit codes: 0 success, 2 bad input (trustlab's InputError/ConfigError and usage errors such as
    ``--sigma abc`` or ``--seed 1 --seed 2``), 1 failure, 130 interrupted. Output cut short by a
    reader that went away (``trustlab --help | head -1``) ends quietly with exit 1 (click's and
    Python's convention for a broken pipe).
    """
    import functools
    import warnings

    before = warnings.formatwarning
    warnings.formatwarning = functools.partial(_format_warning, before, argv)
    try:
        _main(argv)
    finally:
        warnings.formatwarning = before


def _format_warning(python, argv, message, category, filename, lineno, line=None) -> str:
    """A warning trustlab's own code raises as one line, ``trustlab: warning: ...`` (Python's
    format gives the file, the line number and the source line), naming the option for a library
    argument it starts with (``n_bootstrap=10: ...`` -> ``--n-bootstrap 10: ...``), as errors do;
    others as ``python`` (the format in place before) writes them."""
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[1]
    try:
        ours = Path(filename).resolve().is_relative_to(package)
    except (OSError, ValueError):
        ours = False
    if ours:
        text = str(message)
        named = re.match(r"([A-Za-z_]\w*)=(\S+?)([:;,] )", text)
        if named:
            argument, value, rest = named[1], named[2], text[named.end(3) - 2 :]
            option = option_message(f"{argument}:", argument, _options(_click_command(app), argv))
            if option != f"{argument}:":
                text = f"{option[:-1]} {value}{rest}"
        return f"trustlab: warning: {text}\n"
    return python(message, category, filename, lineno, line)


def _main(argv: list[str] | None) -> None:
    import click

    try:
        command = _click_command(app)  # built once a process: app() would build it again
        _refuse_repeated_options(command, sys.argv[1:] if argv is None else argv)
        code = command.main(args=argv, prog_name="trustlab", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # a group without a command: its help
        # the error was made with the help text; typer's rich help printed itself as it was made
        # (and left the text empty), plain click's is the text: print the help once
        if exc.format_message():
            typer.echo(exc.format_message())
        sys.exit(2)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "trustlab"
        typer.echo(f"trustlab: error: {exc.format_message()} (see '{where} --help')", err=True)
        sys.exit(2)
    except (click.Abort, KeyboardInterrupt) as exc:
        if isinstance(exc.__cause__, EOFError):  # click reads any EOFError as Ctrl-D: here, a
            # file that ended early (numpy on an empty .npy/.npz), as trustlab never prompts
            detail = f": {exc.__cause__}" if str(exc.__cause__) else ""
            typer.echo(f"trustlab: failed: a file was empty or cut short{detail}", err=True)
            sys.exit(1)
        typer.echo("trustlab: interrupted", err=True)
        sys.exit(130)
    except InputError as exc:
        message = option_message(str(exc), exc.argument, _options(command, argv))
        typer.echo(f"trustlab: error: {message}", err=True)
        sys.exit(2)
    except ConfigError as exc:
        typer.echo(f"trustlab: error: {exc}", err=True)
        sys.exit(2)
    except TrustlabError as exc:
        typer.echo(f"trustlab: failed: {exc}", err=True)
        sys.exit(1)
    except click.ClickException as exc:  # e.g. a file option that cannot be opened
        typer.echo(f"trustlab: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except MemoryError as exc:  # a size or count option too large for this machine
        typer.echo(f"trustlab: failed: out of memory ({exc}){_memory_hint(argv)}", err=True)
        sys.exit(1)
    except Exception as exc:  # an unexpected failure still ends in one line and exit 1
        typer.echo(f"trustlab: unexpected failure: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
    if code == 130:  # typer turns Ctrl-C in a command into a silent exit 130
        typer.echo("trustlab: interrupted", err=True)
    sys.exit(code if isinstance(code, int) else 0)


def _memory_hint(argv: list[str] | None) -> str:
    """The advice after an out-of-memory line: the numeric option given the largest value (a
    count or size such as ``--greedy-attempts 1e8`` or ``--n-bootstrap 1e13``; a seed is not
    one), else the input's size."""
    args = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    given: list[tuple[float, str, str]] = []
    for i, token in enumerate(args):
        if not token.startswith("--") or token == "--":
            continue
        name, equals, value = token.partition("=")
        if not equals:
            value = args[i + 1] if i + 1 < len(args) else ""
        try:
            number = abs(float(value))
        except ValueError:
            continue
        if "seed" not in name and number == number:  # not NaN
            given.append((number, name, value))
    if not given:
        return "; the input may be too large for this machine's memory"
    _, name, value = max(given)
    return f"; try a smaller {name} (given {value}) or a machine with more memory"


#: app -> its click command; ``typer.main.get_command`` reads every command's signature and
#: type hints (0.1-0.3 s), which a process that calls :func:`main` again (a test suite, a
#: notebook) need not pay twice
_BUILT: dict[int, tuple[typer.Typer, Any]] = {}


def _click_command(root: typer.Typer) -> Any:
    """The click command of the Typer app ``root``, built on its first use in the process."""
    built = _BUILT.get(id(root))
    if built is None or built[0] is not root:
        command = _checked_seeds(_one_suggestion(typer.main.get_command(root)))
        built = _BUILT[id(root)] = (root, command)
    return built[1]


def _checked_seeds(command: Any) -> Any:
    """``command`` with every ``--seed`` option, in it and in its subcommands, checked by the
    one shared callback as it is read (commands with a narrower backend keep their own check)."""
    from trustlab.cli._common import check_seed_option

    for param in getattr(command, "params", []):
        if "--seed" in getattr(param, "opts", ()) and param.callback is None:
            param.callback = check_seed_option
    for sub in getattr(command, "commands", {}).values():
        _checked_seeds(sub)
    return command


def _one_suggestion(group: Any) -> Any:
    """``group`` with typer's "Did you mean" for a mistyped command turned off where click (8.4+,
    its NoSuchCommand) makes its own: both gave "No such command 'dcpp'. Did you mean 'dcp'? Did
    you mean 'dcp'?"."""
    import click

    own = hasattr(click.exceptions, "NoSuchCommand")
    stack = [group]
    while own and stack:
        command = stack.pop()
        if isinstance(command, click.Group):
            if hasattr(command, "suggest_commands"):
                command.suggest_commands = False
            stack.extend(command.commands.values())
    return group


def _command(command, argv: list[str]):
    """The click command that ``argv`` invokes under the root ``command``, its context (for the
    usage error's command path) and the arguments after its name."""
    import click

    context = click.Context(command, info_name="trustlab")
    for i, token in enumerate(argv):
        if not isinstance(command, click.Group) or token not in command.commands:
            return command, context, argv[i:]
        command = command.commands[token]
        context = click.Context(command, parent=context, info_name=token)
    return command, context, []


def _options(root, argv: list[str] | None) -> set[str]:
    """The option names of the command that ``argv`` invokes (the root's if it names none)."""
    command, _, _ = _command(root, sys.argv[1:] if argv is None else argv)
    return {name for param in command.params for name in param.opts}


# options whose values are secrets: a usage error does not show them (--api-key)
_SECRET = re.compile(r"(^|_)(key|secret|password|token)$")


def _shown(value: str) -> str:
    """An option's value as a usage error shows it: a URL without credentials or query."""
    from trustlab._checks import shown_url

    return shown_url(value) if "://" in value else value


def _refuse_repeated_options(root, argv: list[str]) -> None:
    """A usage error for an option that takes one value given twice (click keeps the last and
    says nothing: ``--seed 1 --seed 2`` ran with seed 2), and for a flag given both ways
    (``--chat --no-chat``). Options meant to repeat (``--harmful A --harmful B``) are left alone,
    and so is a flag said twice the same way. A path option given an empty value (``--out ""``)
    is a usage error too: click reads it as the working folder."""
    import click

    command, context, args = _command(root, [str(a) for a in argv])
    by_name = {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    seen: dict[str, tuple[str, str]] = {}  # param name -> (option as written, value)
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            break  # the rest are arguments
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        param = by_name.get(name)
        if param is None or param.count:
            continue
        if param.is_flag:
            value = "off" if name in param.secondary_opts else "on"
        elif not equals:
            value = " ".join(next(tokens, "") for _ in range(max(param.nargs, 1)))
        if isinstance(param.type, click.Path) and not param.is_flag and not value.strip():
            # click turns "" into Path("") == Path("."): `--out ""` wrote into the working folder
            message = f"Option '{name}' was given an empty path; give a path ('.' for this folder)."
            raise click.UsageError(message, ctx=context)
        if param.multiple:
            continue
        if param.name not in seen:
            seen[param.name] = (name, value)
            continue
        first, before = seen[param.name]
        if param.is_flag and value == before:
            continue
        if param.is_flag:
            message = f"Options '{first}' and '{name}' were both given; give one of them."
        else:
            values = f"{_shown(before)!r}, then {_shown(value)!r}"
            if _SECRET.search(param.name or ""):  # a key is not shown, not even a part of it
                values = "values hidden"
            message = f"Option '{name}' was given twice ({values}); give it once."
        raise click.UsageError(message, ctx=context)


if __name__ == "__main__":  # pragma: no cover
    main()
