"""``trustlab agents``: guardrails for tool-using agents from policy rules (ShieldAgent)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab._checks import RepeatedKeyError, unique_keys
from trustlab._results import check_output_dir, output_dir, write_atomic
from trustlab.cli._common import JSON_OPTION_HELP, emit, progress, save
from trustlab.cli._console import tell
from trustlab.cli._runs import OverwriteOption, refuse_existing, refuse_existing_file
from trustlab.errors import InputError

__all__ = ["app"]

app = typer.Typer(
    no_args_is_help=True,
    help="Agent guardrails: check each proposed action of a tool-using agent against weighted "
    "policy rules (LTLf over the trajectory), evaluate, learn weights, serve over HTTP.",
)

SUITES = ("banking", "slack", "travel", "workspace")

PolicyArgument = Annotated[
    Path | None,
    typer.Option("--policy", help="Policy JSON (ASPM format with optional checkers/weights)."),
]
EpsilonOption = Annotated[
    float,
    typer.Option(
        "--epsilon",
        help="Decision margin in (-1, 1): allow iff p_safe >= (1 + epsilon) / 2; negative tolerates uncertain predicates.",
    ),
]


def _json_arg(text: str | None, option: str) -> Any:
    """A JSON value given inline or as @FILE / a path to a .json file."""
    if text is None:
        return None
    path = Path(text[1:] if text.startswith("@") else text)
    if text.startswith("@") or (path.suffix.lower() == ".json" and path.is_file()):
        if not path.is_file():
            raise InputError.bad(option, "inline JSON or an existing JSON file", text)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as err:  # UTF-16 or binary
            raise InputError(
                f"{option}: {path} is not UTF-8 text ({err})", argument=option
            ) from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKeyError as err:  # json kept the last value of the key, unseen
        raise InputError(f"{option}: {err}", argument=option) from None
    except ValueError:  # not JSON, or an integer of over 4300 digits
        if option == "--action" and text.strip() and not text.strip().startswith(("{", "[")):
            return text.strip()  # a bare action name
        raise InputError.bad(option, "valid JSON (inline or a file)", text) from None


def _guardrail(policy: Path | None, suite: str | None, epsilon: float):
    from trustlab.agents import Guardrail

    if (policy is None) == (suite is None):
        raise InputError.bad(
            "--policy", "exactly one of --policy FILE or --suite NAME", "both or neither"
        )
    if suite is not None:
        from trustlab.agents.agentdojo import suite_guardrail

        _check_suite(suite)
        return suite_guardrail(suite, epsilon=epsilon)  # read-only tools are allowed
    return Guardrail(policy, epsilon=epsilon)


def _check_suite(suite: str) -> None:
    if suite not in SUITES:
        raise InputError.bad("--suite", f"one of {list(SUITES)}", suite)


CHECK_HELP = """Check one proposed action against a policy.

--trajectory is the history (JSON: {"task_intent", "steps": [...]} or the ShieldAgent
conversation format; inline, @FILE or a .json path); --action the proposed action (JSON
{"name", "arguments"} or a bare name); --evidence optional predicate values of the proposed
step (truth values or probabilities) that override the policy's checkers.

Example:

  trustlab agents check --policy policy.json --trajectory run.json --action '{"name": "send_money", "arguments": {"recipient": "X"}}'
"""


@app.command("check", help=CHECK_HELP)
def check_command(
    action: Annotated[str, typer.Option("--action", help="The proposed action (JSON or a name).")],
    trajectory: Annotated[
        str | None,
        typer.Option("--trajectory", help="The history so far (JSON, @FILE or a .json path)."),
    ] = None,
    policy: PolicyArgument = None,
    suite: Annotated[
        str | None, typer.Option("--suite", help="Use the bundled policy of an AgentDojo suite.")
    ] = None,
    evidence: Annotated[
        str | None, typer.Option("--evidence", help="Predicate values of the proposed step (JSON).")
    ] = None,
    epsilon: EpsilonOption = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    guard = _guardrail(policy, suite, epsilon)
    decision = guard.check(
        _json_arg(trajectory, "--trajectory"),
        _json_arg(action, "--action"),
        evidence=_json_arg(evidence, "--evidence"),
    )
    emit(decision, as_json)


EVALUATE_HELP = """Evaluate a guardrail on labelled cases: accuracy, false-positive rate, rule recall.

Cases come from AgentDojo's suites (--suite, repeatable; each with its bundled policy: benign
steps from the user tasks' ground truths, unsafe ones with an injection task's calls spliced in;
one --suite with --policy checks that suite's cases with the given policy instead, such as the
one learn-weights --suite wrote) or from a JSON/JSONL file (--cases with --policy; each case
{trajectory, action, label "safe"/"unsafe", expected_rules, oracle, group, cluster}). --mode
oracle gives the proposed step's true predicate values as evidence (tests the rules and the
inference); --mode checkers lets the policy's checkers compute them (tests the whole
guardrail).

--out DIR writes result.json, the figure, and report.html/report.json (the evaluation page).

Example:

  trustlab agents evaluate --suite banking --suite slack --mode checkers --out guard_eval/
"""


@app.command("evaluate", help=EVALUATE_HELP)
def evaluate_command(
    suite: Annotated[
        list[str] | None, typer.Option("--suite", help=f"AgentDojo suite ({', '.join(SUITES)}).")
    ] = None,
    cases: Annotated[
        Path | None, typer.Option("--cases", help="Labelled cases (JSON or JSONL).")
    ] = None,
    policy: PolicyArgument = None,
    mode: Annotated[str, typer.Option("--mode", help="checkers or oracle.")] = "checkers",
    epsilon: EpsilonOption = 0.0,
    n_bootstrap: Annotated[int, typer.Option("--n-bootstrap", help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the bootstrap.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the result and its page here.")
    ] = None,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab._checks import check_choice
    from trustlab.agents import Guardrail, evaluate_guardrail
    from trustlab.agents.evaluation import MODES

    check_choice(mode, "--mode", MODES)  # before seconds of loading (review 58)
    refuse_existing(out, overwrite, ("result.json", "report.html"), "a guardrail evaluation")
    if bool(suite) == (cases is not None):
        raise InputError.bad(
            "--suite", "either --suite (repeatable) or --cases FILE", "both or neither"
        )
    if suite and policy is not None and len(suite) != 1:  # one policy is for one suite
        raise InputError.bad(
            "--policy",
            "one --suite with --policy (a policy for that suite's cases)",
            f"{len(suite)} suites",
        )
    if suite:
        from trustlab.agents.agentdojo import agentdojo_cases, suite_guardrail

        for s in suite:
            _check_suite(s)
        if policy is not None:  # e.g. learn-weights --suite S --out FILE: the suite's cases
            guard: Any = Guardrail(policy, epsilon=epsilon)
        else:
            guard = {s: suite_guardrail(s, epsilon=epsilon) for s in suite}
        items = [c for s in suite for c in agentdojo_cases(s)]
    else:
        if policy is None:
            raise InputError.bad("--policy", "a policy file with --cases", None)
        guard = Guardrail(policy, epsilon=epsilon)
        items = _read_cases(cases)
    with progress() as bar:
        task = bar.add_task(f"checking {len(items)} cases", total=len(items))
        result = evaluate_guardrail(
            guard,
            items,
            mode=mode,
            n_bootstrap=n_bootstrap,
            random_state=seed,
            progress=lambda done, total: bar.update(task, completed=done),
        )
    emit(result, as_json)
    save(result, out, as_json)
    if out is not None:
        from trustlab.audit.sections.guardrail import write_page

        html, _ = write_page(
            result,
            out,
            meta={
                "suites": list(suite or []) or str(cases),
                **({"policy": str(policy)} if policy is not None else {}),
                "epsilon": epsilon,
            },
        )
        tell(f"wrote {html.name} to {out}", as_json)


def _read_cases(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError.bad("--cases", "an existing JSON or JSONL file", str(path))
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:  # UTF-16 or binary
        raise InputError(f"--cases: {path} is not UTF-8 text ({err})", argument="--cases") from None
    if path.suffix.lower() == ".jsonl":
        items = []
        for number, line in enumerate(text.split("\n"), 1):  # U+2028 in a string: no newline
            if not line.strip():
                continue
            try:
                items.append(json.loads(line, object_pairs_hook=unique_keys))
            except ValueError as err:  # the error's own "line 1" is the line's, not the file's
                raise InputError(
                    f"--cases: line {number} of {path} is not valid JSON ({err})",
                    argument="--cases",
                ) from None
            if not isinstance(items[-1], dict):
                raise InputError.bad(
                    "--cases", f"a case object on line {number} of {path}", items[-1]
                )
        return items
    try:
        items = json.loads(text, object_pairs_hook=unique_keys)
    except ValueError as err:  # not JSON, a 4300-digit integer, a key given twice
        raise InputError(f"--cases: {path} is not valid JSON ({err})", argument="--cases") from None
    if not isinstance(items, list):
        raise InputError.bad("--cases", "a JSON list of case objects", type(items).__name__)
    for i, case in enumerate(items):
        if not isinstance(case, dict):
            raise InputError.bad("--cases", f"a case object at index {i} of the list", case)
    return items


LEARN_HELP = """Learn rule weights from labelled cases and write the policy with them.

The weights maximise the L2-penalised likelihood of the labels (logistic regression without
intercept on each rule's effect on the action, C = --c). Rules no case exercises keep their
weight. Predicate values come from the cases' oracle values (--mode oracle) or the checkers.

Example:

  trustlab agents learn-weights --suite banking --out banking_weighted.json
"""


@app.command("learn-weights", help=LEARN_HELP)
def learn_weights_command(
    out: Annotated[
        Path, typer.Option("--out", help="Write the policy with learned weights here (JSON).")
    ],
    suite: Annotated[str | None, typer.Option("--suite", help="AgentDojo suite.")] = None,
    cases: Annotated[
        Path | None, typer.Option("--cases", help="Labelled cases (JSON or JSONL).")
    ] = None,
    policy: PolicyArgument = None,
    c: Annotated[float, typer.Option("--c", help="Inverse regularisation strength C.")] = 1.0,
    mode: Annotated[str, typer.Option("--mode", help="oracle or checkers.")] = "oracle",
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab._checks import check_positive
    from trustlab.agents import fit_rule_weights
    from trustlab.agents.evaluation import MODES

    _check_out_file(out, overwrite)
    if mode not in MODES:
        raise InputError.bad("--mode", "oracle or checkers", mode)
    check_positive(c, "--c")  # before the cases are read (and refused for lack of an oracle)
    if suite is not None:
        from trustlab.agents.agentdojo import agentdojo_cases

        for option, given in (("--policy", policy), ("--cases", cases)):
            if given is not None:  # it would be ignored: the suite brings its policy and cases
                raise InputError.bad(option, f"no {option} with --suite", str(given))
        guard = _guardrail(None, suite, 0.0)
        items: list[Any] = list(agentdojo_cases(suite))
    else:
        if cases is None:
            raise InputError.bad("--cases", "--cases FILE with --policy, or --suite", None)
        guard = _guardrail(policy, None, 0.0)
        items = _read_cases(cases)
    if mode == "checkers":
        items = [_without_oracle(c) for c in items]
    else:  # the oracle alone, as evaluate --mode oracle: a case's evidence or checkers were used
        items = [_oracle_only(c, i) for i, c in enumerate(items)]
    with progress() as bar:
        bar.add_task(f"learning weights from {len(items)} cases", total=None)
        fit = fit_rule_weights(guard, items, C=c)
    emit(fit, as_json)
    # with every weight and the guardrail's unknown_action (the suites allow the tools they do
    # not guard), so --policy OUT decides as the guardrail the weights were learned for
    weighted = guard.with_weights(fit.weights).policy_json()
    output_dir(out.parent, "--out")
    write_atomic(out, json.dumps(weighted, indent=2) + "\n")
    tell(f"wrote the weighted policy to {out}", as_json)


def _check_out_file(out: Path, overwrite: bool) -> None:
    """Refuse, before any work, an ``--out`` that cannot become the JSON file: a folder (even
    with --overwrite), a path under a file, or an existing file without --overwrite."""
    if out.is_dir():
        raise InputError(
            f"--out: expected a JSON file path, got the directory {out}", argument="--out"
        )
    check_output_dir(out.parent, "--out")
    refuse_existing_file(out, overwrite)


def _without_oracle(case: Any) -> dict[str, Any]:
    get = case.get if isinstance(case, dict) else lambda k, d=None: getattr(case, k, d)
    return {k: get(k) for k in ("trajectory", "action", "label") if get(k) is not None}


def _oracle_only(case: Any, i: int) -> dict[str, Any]:
    """The case with its oracle values as the only evidence (refused without them)."""
    get = case.get if isinstance(case, dict) else lambda k, d=None: getattr(case, k, d)
    if get("oracle") is None:
        raise InputError.bad(
            f"cases[{i}].oracle", "oracle predicate values with --mode oracle", None
        )
    return {k: get(k) for k in ("trajectory", "action", "label", "oracle") if get(k) is not None}


SERVE_HELP = """Serve a guardrail over HTTP: POST /check {trajectory, action, evidence} answers the
decision as JSON (400 with a message for a malformed request); GET /health, GET /policy. Ctrl-C
or SIGTERM stops it.

Example:

  trustlab agents serve --policy policy.json --port 8765
"""


@app.command("serve", help=SERVE_HELP)
def serve_command(
    policy: PolicyArgument = None,
    suite: Annotated[str | None, typer.Option("--suite", help="AgentDojo suite policy.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port (0: any free one).")] = 8765,
    epsilon: EpsilonOption = 0.0,
) -> None:
    from trustlab.agents.server import serve_guardrail

    guard = _guardrail(policy, suite, epsilon)

    def ready(server: Any) -> None:
        tell(f"guardrail serving on {server.url} (POST /check); Ctrl-C stops", False)

    def stop(signum: int, frame: Any) -> None:  # SIGTERM stops as Ctrl-C does
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        serve_guardrail(guard, host, port, on_ready=ready)
    except KeyboardInterrupt:
        tell("stopped", False)
    finally:
        signal.signal(signal.SIGTERM, previous)


CLUSTER_HELP = """Group a policy's rules by meaning (candidates for near-duplicates to merge):
the rule descriptions are embedded with the offline all-MiniLM-L6-v2, joined by a sharp kernel on
their cosine distance and cut by spectral clustering; the number of clusters comes from the
eigengap unless --n-clusters. Every rule is put in some cluster (a rule with no paraphrase often
joins one, and only sometimes stands alone), so each cluster is shown with the smallest cosine
between two of its rules: a low one means unrelated rules, not duplicates.

Example:

  trustlab agents cluster --policy policy.json
"""


@app.command("cluster", help=CLUSTER_HELP)
def cluster_command(
    policy: PolicyArgument = None,
    suite: Annotated[str | None, typer.Option("--suite", help="AgentDojo suite policy.")] = None,
    n_clusters: Annotated[
        int | None,
        typer.Option("--n-clusters", help="Number of clusters (default: the eigengap's choice)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Write result.json here.")] = None,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab.agents import cluster_rules

    refuse_existing(out, overwrite, ("result.json",), "results")
    guard = _guardrail(policy, suite, 0.0)
    with progress() as bar:
        bar.add_task("embedding and clustering the rules", total=None)
        result = cluster_rules(guard.policy, n_clusters=n_clusters, random_state=seed)
    emit(result, as_json)
    save(result, out, as_json)
