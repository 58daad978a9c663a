"""``trustlab llm``: local language models, OpenAI-compatible endpoints, and a server."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from trustlab.cli._common import (
    JSON_OPTION_HELP,
    YesOption,
    announce,
    emit,
    err_console,
    progress,
    tracker,
)
from trustlab.cli._runs import counted
from trustlab.errors import InputError

#: Generated tokens run without --yes: hours for a small model on a CPU.
GENERATION_LIMIT = 1_000_000

__all__ = ["app"]

app = typer.Typer(
    no_args_is_help=True,
    help="Language models: what loads offline, generation (local or remote), an OpenAI server.",
)

# Help texts: one line per paragraph (the help formatter wraps them to the terminal), so that
# no sentence breaks where the source line happens to end. Example commands keep their lines.
GENERATE_HELP = (
    "Generate text for one or more prompts.\n\n"
    "--model is a model name (see `trustlab llm models`), a .gguf file or a Hugging Face "
    "folder, loaded locally. With --endpoint URL it is the model id of an OpenAI-compatible "
    "endpoint (vLLM, Ollama, llama.cpp, `trustlab llm serve`) and nothing is loaded.\n\n"
    "Examples:\n\n"
    '  trustlab llm generate --model smollm2-135m-instruct "Name a colour."\n\n'
    "  trustlab llm generate --endpoint http://localhost:8000/v1 --model smollm2-135m-instruct "
    '--max-new-tokens 32 "Name a colour." "Name a fruit."\n'
)

SERVE_HELP = (
    "Serve a local model as an OpenAI-compatible endpoint (Ctrl-C to stop).\n\n"
    "Endpoints: GET /v1/models, POST /v1/chat/completions and POST /v1/completions, with "
    "streaming (stream: true), logprobs, n, seed and stop. Requests that arrive together are "
    "batched into shared forward passes (--max-batch-size 1 serves one at a time).\n\n"
    "Keep the default host 127.0.0.1 unless other machines must reach the server. Then set "
    "--api-key (or TRUSTLAB_API_KEY), which clients must send as a Bearer token.\n\n"
    "Example:\n\n"
    "  trustlab llm serve --model smollm2-135m-instruct --port 8000\n"
)


@app.command("models")
def models_command(
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """List the models known by name and whether each loads offline here."""
    from trustlab.llm import available_models

    emit(available_models(), as_json)


@app.command("generate", help=GENERATE_HELP)
def generate_command(
    ctx: typer.Context,
    prompts: Annotated[list[str], typer.Argument(help="One or more prompts.", show_default=False)],
    model: Annotated[
        str, typer.Option("--model", help="Model name or path (or the endpoint's model id).")
    ],
    endpoint: Annotated[
        str | None,
        typer.Option("--endpoint", help="An OpenAI-compatible base URL, e.g. http://host:8000/v1."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar="TRUSTLAB_API_KEY", help="Bearer key for --endpoint."),
    ] = None,
    max_new_tokens: Annotated[
        int, typer.Option("--max-new-tokens", help="The most tokens to generate per prompt.")
    ] = 64,
    chat: Annotated[
        bool, typer.Option("--chat/--no-chat", help="Apply the chat template (chat endpoint).")
    ] = True,
    temperature: Annotated[
        float, typer.Option("--temperature", help="0 is greedy; higher samples more freely.")
    ] = 0.0,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed for sampling at --temperature > 0 (default: none, a fresh draw each run).",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds per request attempt (--endpoint).")
    ] = 60.0,
    yes: YesOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    from trustlab._checks import check_positive_int
    from trustlab.llm import generate_texts, load_model
    from trustlab.llm.registry import check_chat_support, resolve_source
    from trustlab.llm.settings import check_seed, check_temperature

    plan = (
        f"generating up to {counted(max_new_tokens, 'new token')} for each of "
        f"{counted(len(prompts), 'prompt')} with {model}"
    )
    # what generate_texts checks before a load, here before the plan: bad input stays one line
    check_positive_int(max_new_tokens, "max_new_tokens")
    check_temperature(temperature)
    check_seed(seed)
    if endpoint is None:
        _refuse_endpoint_options(ctx)
        check_chat_support(model, chat)  # a model known to have no chat template (--chat)
        resolve_source(model)  # a name or path that names no model (--model)
    backend: Any = None if endpoint is None else _remote(endpoint, model, api_key, timeout)
    # the plan (or the refusal of a runaway generation) before a model loads
    tokens = float(len(prompts)) * max_new_tokens
    announce(plan, work=tokens, limit=GENERATION_LIMIT, yes=yes, unit=" tokens")
    if backend is None:
        with progress() as bar:
            bar.add_task(f"loading {model}", total=None)
            backend = load_model(model)
    with progress() as bar:
        report = tracker(bar, f"generating for {len(prompts)} prompt(s)", len(prompts))
        result = generate_texts(
            backend,
            prompts,
            max_new_tokens,
            chat=chat,
            temperature=temperature,
            random_state=seed,
            progress=report,
        )
    emit(result, as_json)


@app.command("serve", help=SERVE_HELP)
def serve_command(
    model: Annotated[str, typer.Option("--model", help="Model name, .gguf file or HF folder.")],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on (0: any free one).")
    ] = 8000,
    name: Annotated[
        str | None, typer.Option("--name", help="Model id clients ask for (default: its name).")
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar="TRUSTLAB_API_KEY", help="Require this Bearer key."),
    ] = None,
    max_batch_size: Annotated[
        int,
        typer.Option(
            "--max-batch-size",
            help="The most requests run together in one batch (1: one at a time).",
        ),
    ] = 32,
) -> None:
    from trustlab.llm import make_server

    with progress() as bar:
        bar.add_task(f"loading {model}", total=None)
        # checks the options, then loads the model
        server = make_server(
            model, host, port, model_name=name, api_key=api_key, max_batch_size=max_batch_size
        )
    err_console.print(
        f"serving {server.model_name} at {server.url}/v1 (OpenAI-compatible); Ctrl-C to stop",
        markup=False,
        highlight=False,
    )
    server.serve_forever()


def _remote(endpoint: str, model: str, api_key: str | None, timeout: float) -> Any:
    from trustlab.llm import RemoteModel

    return RemoteModel(endpoint, model, api_key, timeout=timeout)


def _refuse_endpoint_options(ctx: typer.Context) -> None:
    """Refuse --api-key or --timeout typed without --endpoint (a local model ignored them); the
    TRUSTLAB_API_KEY environment variable is left alone: it is set for every command."""
    from click.core import ParameterSource

    for name, option in (("api_key", "--api-key"), ("timeout", "--timeout")):
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
            raise InputError(
                f"{option}: expected only with --endpoint (a local model makes no requests), "
                "got it without: add --endpoint URL or leave it out",
                argument=option,
            )
