"""``trustlab llm``: models, generate (local and --endpoint), serve; one-line errors."""

import json
import socket

import pytest

import trustlab.llm
import trustlab.llm.generations as generations_module
import trustlab.llm.remote as remote
import trustlab.llm.server as server_module
from cli_helpers import one_line
from trustlab.llm import make_server


class Reverser:
    """A deterministic stand-in for LocalModel: each prompt reversed, tagged with the mode."""

    name = "reverser"

    def generate(
        self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, random_state=None
    ):
        return [f"{'chat' if chat else 'text'}/{max_new_tokens} {p[::-1]}" for p in prompts]


def after_the_plan(err, plan):
    """The one line besides progress lines after the plan, which comes first (before any load
    or request, so a failure there follows it)."""
    first, _, rest = err.partition("\n")
    assert first == f"trustlab: {plan}", err
    return one_line(rest)


@pytest.fixture
def no_load(monkeypatch):
    """Fail the test if a command loads a model."""

    def refuse(name):
        raise AssertionError(f"loaded {name}")

    monkeypatch.setattr(generations_module, "load_model", refuse)
    monkeypatch.setattr(server_module, "load_model", refuse)
    monkeypatch.setattr(trustlab.llm, "load_model", refuse)  # generate loads it itself


def test_models_json_lists_smollm2_as_installed(run):
    code, out, _ = run("llm", "models", "--json")
    assert code == 0
    models = {m["name"]: m for m in json.loads(out)["models"]}
    assert models["smollm2-135m-instruct"]["installed"] is True
    assert models["smollm2-135m-instruct"]["chat"] is True
    assert set(models) == {"smollm2-135m-instruct", "gemma3-270m"}


def test_models_table_shows_each_name(run):
    code, out, _ = run("llm", "models")
    assert code == 0
    assert "smollm2-135m-instruct" in out and "gemma3-270m" in out and "installed" in out


def test_generate_locally_equals_the_api(run, smollm2):
    prompt = "Name a colour."
    code, out, _ = run(
        "llm", "generate", "--model", "smollm2-135m-instruct", "--max-new-tokens", 4, "--json",
        prompt,
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["endpoint"] is None and data["max_new_tokens"] == 4
    assert [g["text"] for g in data["generations"]] == smollm2.generate([prompt], 4)


def test_generate_through_an_endpoint(run, no_load):
    with make_server(Reverser()) as srv:
        code, out, _ = run(
            "llm", "generate", "--endpoint", srv.url, "--model", "reverser", "--no-chat",
            "--max-new-tokens", 3, "--json", "ab", "cde",
        )  # fmt: skip
        assert code == 0
        data = json.loads(out)
        assert data["endpoint"] == srv.url + "/v1" and data["chat"] is False
        assert data["generations"] == [
            {"prompt": "ab", "text": "text/3 ba"},
            {"prompt": "cde", "text": "text/3 edc"},
        ]
        code, out, _ = run("llm", "generate", "--endpoint", srv.url, "--model", "reverser", "xy")
        assert code == 0 and out.strip() == "chat/64 yx"


def test_unknown_model_is_exit_2_listing_the_names(run):
    code, _, err = run("llm", "generate", "--model", "no-such-model", "hello")
    assert code == 2
    line = one_line(err)
    assert "no-such-model" in line and "smollm2-135m-instruct" in line


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--endpoint", "localhost:8000"], "--endpoint"),
        (["--endpoint", "http://127.0.0.1:1/v1?key=1"], "--endpoint"),  # a query was dropped
        (["--endpoint", "http://127.0.0.1:1", "--timeout", "0"], "--timeout"),
        (["--max-new-tokens", "0"], "--max-new-tokens"),
        (["--temperature", "-1"], "--temperature"),
    ],
)
def test_bad_options_are_exit_2_before_any_work(run, no_load, args, flag):
    code, _, err = run("llm", "generate", "--model", "m", *args, "hello")
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {flag}: expected")


def test_a_negative_seed_is_told_in_the_command_lines_words(run, no_load):
    """Not 'None, an integer >= 0 or a numpy Generator': the CLI passes neither."""
    code, _, err = run("llm", "generate", "--model", "m", "--seed", "-1", "hello")
    assert code == 2
    assert one_line(err) == "trustlab: error: --seed: expected a non-negative integer seed, got -1"


def test_unreachable_endpoint_is_exit_1_in_one_line(run, monkeypatch):
    monkeypatch.setattr(remote, "_sleep", lambda seconds: None)
    code, _, err = run("llm", "generate", "--endpoint", "http://127.0.0.1:1", "--model", "m", "x")
    assert code == 1
    plan = "generating up to 64 new tokens for each of 1 prompt with m"
    assert "connection failed" in after_the_plan(err, plan)


def test_serve_hands_the_loaded_model_to_the_server(run, monkeypatch):
    seen = {}
    model = Reverser()

    def fake_serve_forever(server):  # instead of blocking: record what runs, then stop
        seen.update(model=server.model, host=server.host, port=server.port,
                    model_name=server.model_name, api_key=server._authorised("Bearer k"),
                    refuses_no_key=not server._authorised(None))  # fmt: skip
        server.shutdown()

    monkeypatch.setattr(server_module, "load_model", lambda name: seen.setdefault(name, model))
    monkeypatch.setattr(server_module.LLMServer, "serve_forever", fake_serve_forever)
    with socket.socket() as sock:  # a port that was free a moment ago
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _, err = run(
        "llm", "serve", "--model", "x", "--port", port, "--name", "r", "--api-key", "k"
    )
    assert code == 0
    assert seen == {"x": model, "model": model, "host": "127.0.0.1", "port": port,
                    "model_name": "r", "api_key": True, "refuses_no_key": True}  # fmt: skip
    assert f"serving r at http://127.0.0.1:{port}/v1" in err


def test_serve_bad_port_is_exit_2_before_loading(run, no_load):
    code, _, err = run("llm", "serve", "--model", "x", "--port", 70000)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --port: expected")


@pytest.mark.parametrize("host", ["256.1.1.1", "192.0.2.1"])
def test_serve_host_that_is_not_this_machines_is_exit_2_before_loading(run, no_load, host):
    # before: the model loaded, then "failed: could not listen on 256.1.1.1:8000" with exit 1
    code, _, err = run("llm", "serve", "--model", "x", "--host", host, "--port", 0)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --host: expected an IPv4 address or name")
    assert host in err


def test_serve_bad_batch_size_is_exit_2_before_loading(run, no_load):
    code, _, err = run("llm", "serve", "--model", "x", "--max-batch-size", 0)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --max-batch-size: expected")


def test_serve_empty_name_names_the_option_before_loading(run, no_load):
    # it said "model_name: expected a non-empty string", the library's argument
    code, _, err = run("llm", "serve", "--model", "x", "--name", " ")
    assert code == 2
    assert one_line(err) == "trustlab: error: --name: expected a non-empty string, got ' '"


@pytest.mark.parametrize(
    ("command", "sentence"),
    [
        ("serve", "Keep the default host 127.0.0.1 unless other machines must reach the server."),
        ("generate", "With --endpoint URL it is the model id of an OpenAI-compatible endpoint"),
    ],
)
def test_help_paragraphs_are_whole_sentences(run, command, sentence):
    from trustlab.cli import llm

    text = {"serve": llm.SERVE_HELP, "generate": llm.GENERATE_HELP}[command]
    for paragraph in text.strip().split("\n\n"):
        # one line each: the help formatter wraps them, never where a source line ended
        assert "\n" not in paragraph, paragraph
    code, out, _ = run("llm", command, "--help")
    assert code == 0
    assert sentence in " ".join(out.split())  # the help as it reads, wrapping undone


def test_generate_reports_progress_with_a_total(run, monkeypatch):
    # without a terminal the shared progress writes lines with these totals ("2/2 (100%)")
    import trustlab.cli.llm as cli_llm

    reported = []
    real_tracker = cli_llm.tracker

    def spy(bar, description, total=None):
        report = real_tracker(bar, description, total)

        def both(done, total):
            reported.append((done, total))
            report(done, total)

        return both

    monkeypatch.setattr(cli_llm, "tracker", spy)
    with make_server(Reverser()) as srv:
        code, _, _ = run("llm", "generate", "--endpoint", srv.url, "--model", "reverser", "a", "b")
    assert code == 0
    assert sorted(reported) == [(1, 2), (2, 2)]


def test_runaway_generation_needs_yes_before_a_model_loads(run, no_load):
    code, _, err = run("llm", "generate", "--model", "smollm2-135m-instruct",
                       "--max-new-tokens", 10**7, "hi")  # fmt: skip
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --yes: generating up to 10^7 new tokens for each of 1 prompt with "
        "smollm2-135m-instruct is 1e+07 tokens, beyond the 1e+06 tokens this command runs "
        "without asking (it may take very long); check the options or pass --yes"
    )


def test_generate_says_its_plan(run, no_load):
    with make_server(Reverser()) as srv:
        code, _, err = run("llm", "generate", "--endpoint", srv.url, "--model", "reverser", "a")
    assert code == 0
    assert "trustlab: generating up to 64 new tokens for each of 1 prompt with reverser" in err


def test_serve_busy_port_is_exit_1_before_loading(run, no_load):
    # before: the model loaded (15 s for SmolLM2), then "could not listen on ...: Address
    # already in use". Exit 1, not 2: the port is a valid value held by another process
    # (a resource, free again later), not a bad option
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run("llm", "serve", "--model", "x", "--port", port)
    assert code == 1
    assert one_line(err).startswith(f"trustlab: failed: could not listen on 127.0.0.1:{port}: ")


def test_a_folder_transformers_cannot_read_is_one_line_exit_1(run, tmp_path):
    # a config.json without a tokenizer (a partial download): transformers' reason is a
    # numbered list over five lines, which the error printed as they came
    (tmp_path / "config.json").write_text("{}")
    code, _, err = run("llm", "generate", "--model", tmp_path, "hi", "--max-new-tokens", 2)
    assert code == 1
    line = after_the_plan(
        err, f"generating up to 2 new tokens for each of 1 prompt with {tmp_path}"
    )
    assert line.startswith(
        f"trustlab: failed: transformers could not load the model folder {tmp_path}: "
    )


def test_a_truncated_safetensors_file_is_one_line_exit_1(run, tmp_path, tiny_llama_folder):
    # it ended as "unexpected failure: SafetensorError: Error while deserializing header"
    import shutil

    folder = tmp_path / "damaged"
    shutil.copytree(tiny_llama_folder, folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    code, _, err = run("llm", "generate", "--model", folder, "hi", "--max-new-tokens", 2)
    assert code == 1
    plan = f"generating up to 2 new tokens for each of 1 prompt with {folder}"
    assert after_the_plan(err, plan).startswith(
        f"trustlab: failed: transformers could not load the model folder {folder}: "
    )


def test_generate_json_records_the_seed(run, monkeypatch):
    class Model:
        name = "m"

        def generate(self, prompts, max_new_tokens=64, **settings):
            return [p[::-1] for p in prompts]

    monkeypatch.setattr(trustlab.llm, "load_model", lambda name: Model())  # the CLI loads it
    code, out, _ = run(
        "llm", "generate", "--model", "smollm2-135m-instruct", "--seed", 4, "--temperature", 1,
        "--json", "ab",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert (data["temperature"], data["random_state"]) == (1.0, 4)
