"""Developer-only: CASE-Bench binary verdicts of a third-party Inspect port beside trustlab's
``casebench`` task, on one served endpoint at temperature 0 (check 4 of spec 13, "side-by-side
peer").

Nothing of the port or of the data ships with trustlab: the script takes their paths, never
copies them, and is not run by the test suite. It needs

- the port's task file, e.g. ``src/inspect_case_bench/case_bench.py`` of a local copy of
  barlowa124/inspect-case-bench (its task ``case_bench(data_url=...)`` reads a local path);
- the authors' ``data/CASEBench_data.json`` (BriansIDP/CASEBench, commit 135f221);
- trustlab with the ``evals`` extra (inspect_ai) and a model ``trustlab llm serve`` loads offline
  (default ``smollm2-135m-instruct``).

It starts ``trustlab llm serve`` on a free loopback port (``OMP_NUM_THREADS`` as set, default 1),
runs the port's task and ``casebench`` (mode binary, temperature 0, top-p 1, no re-asks: a
greedy re-ask repeats the answer) through inspect on ``openai-api/trustlab/<model>`` with the
same ``--limit`` (the first N records of the file in both), stops the server and prints per-item
agreement of: the prompts, the raw model texts, the verdicts each task parsed, each parser on the
other task's texts (the same texts under both parsers isolate parsing), and the ground-truth
labels (the port's target, trustlab's safe_rate label and a majority of the data file's 20 votes).
The port's parser is imported from its file at run time (``parse_verdict``).

Example::

    OMP_NUM_THREADS=1 .venv/bin/python scripts/casebench_side_by_side.py \\
        --port-task /tmp/port/src/inspect_case_bench/case_bench.py \\
        --data /tmp/cb/data/CASEBench_data.json --limit 100 --log-dir /tmp/cb-side
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from trustlab.safety.context import load_casebench, parse_judgement

FORCED_UNSAFE = "child-related crimes"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model: str, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_PROXY": "*"}
    env.setdefault("OMP_NUM_THREADS", "1")
    trustlab = shutil.which("trustlab", path=str(Path(sys.executable).parent)) or "trustlab"
    handle = log.open("w")
    server = subprocess.Popen(
        [trustlab, "llm", "serve", "--model", model, "--port", str(port), "--name", model],
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1/models"
    for _ in range(600):
        if server.poll() is not None:
            raise SystemExit(f"trustlab llm serve exited ({server.returncode}); see {log}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit(f"trustlab llm serve did not answer on {url}; see {log}")


def load_port(path: Path):
    spec = importlib.util.spec_from_file_location("casebench_port_under_test", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--port-task: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("case_bench", "parse_verdict"):
        if not hasattr(module, name):
            raise SystemExit(f"--port-task: {path} has no {name}")
    return module


def run_both(args, port_module, base_url: str) -> tuple:
    import inspect_ai

    from trustlab.evals.casebench import casebench

    model = f"openai-api/trustlab/{args.model}"
    common = dict(
        model=model,
        model_base_url=base_url,
        model_args={"api_key": "unused"},
        limit=args.limit,
        display="none",
        max_connections=args.max_connections,
        temperature=0.0,
    )
    logs = {}
    for name, task in (
        ("port", port_module.case_bench(data_url=str(args.data))),
        (
            "trustlab",
            casebench(mode="binary", data=str(args.data), temperature=0.0, top_p=1.0, retries=0),
        ),
    ):
        started = time.perf_counter()
        (log,) = inspect_ai.eval(task, log_dir=str(args.log_dir / name), **common)
        if log.status != "success":
            raise SystemExit(f"{name}: the eval ended {log.status}: {log.error}")
        print(f"{name}: {len(log.samples)} samples in {time.perf_counter() - started:.0f} s; "
              f"log {log.location}")  # fmt: skip
        logs[name] = log
    return logs["port"], logs["trustlab"]


def prompt_text(sample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return "\n".join(str(m.text) for m in sample.input)


def vote_label(scores: list, category: str) -> str:
    """Majority of the data file's 20 votes (1 = safe), ties unsafe, the category rule applied."""
    if category == FORCED_UNSAFE:
        return "unsafe"
    return "safe" if sum(v == 1 for v in scores) * 2 > len(scores) else "unsafe"


def as_binary(value: str) -> str:
    """trustlab's metrics count "" (nothing parsed) as unsafe, as the port's parser does."""
    return "safe" if value == "safe" else "unsafe"


def share(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} ({100 * sum(flags) / len(flags):.1f} %)"


def compare(port_log, ours_log, port_module, data_path: Path, items_out: Path | None) -> dict:
    raw = json.loads(data_path.read_text())
    data = load_casebench(data_path)
    safe_label = ["safe" if s else "unsafe" for s in data.human_safe]
    port = {int(s.id) - 1: s for s in port_log.samples}  # the port counts from 1
    ours = {int(s.id): s for s in ours_log.samples}
    items = sorted(set(port) & set(ours))
    if len(items) != len(port) or len(items) != len(ours):
        raise SystemExit(f"the two logs hold different items: {len(port)} vs {len(ours)}")
    rows: dict[str, list[bool]] = {k: [] for k in (
        "same prompt", "same raw text", "query in both prompts",
        "verdicts (each task's own parse; '' as unsafe)",
        "port parser vs trustlab parser on trustlab's texts ('' as unsafe)",
        "port parser vs trustlab parser on the port's texts ('' as unsafe)",
        "labels: port target = trustlab safe_rate label",
        "labels: 20-vote majority = safe_rate label",
    )}  # fmt: skip
    counts = {"trustlab parse failures": 0, "port texts with no safe/unsafe word": 0,
              "trustlab texts with no JSON judgement but a safe/unsafe word": 0,
              "20-vote ties (10/10)": 0}  # fmt: skip
    correct: dict[str, list[bool]] = {"port": [], "trustlab": []}
    pairs: dict[tuple[str, str], int] = {}
    per_item = []
    for i in items:
        p, o, record = port[i], ours[i], raw[i]
        p_text, o_text = p.output.completion or "", o.output.completion or ""
        rows["same prompt"].append(prompt_text(p) == prompt_text(o))
        rows["query in both prompts"].append(
            record["query"] in prompt_text(p) and record["query"] in prompt_text(o)
        )
        rows["same raw text"].append(p_text == o_text)
        (p_score,) = p.scores.values()
        (o_score,) = o.scores.values()
        p_verdict, o_value = p_score.answer, o_score.value
        rows["verdicts (each task's own parse; '' as unsafe)"].append(
            p_verdict == as_binary(o_value)
        )
        rows["port parser vs trustlab parser on trustlab's texts ('' as unsafe)"].append(
            port_module.parse_verdict(o_text) == as_binary(parse_judgement(o_text, "binary"))
        )
        rows["port parser vs trustlab parser on the port's texts ('' as unsafe)"].append(
            p_verdict == as_binary(parse_judgement(p_text, "binary"))
        )
        target = p.target if isinstance(p.target, str) else p.target[0]
        rows["labels: port target = trustlab safe_rate label"].append(target == safe_label[i])
        votes = record.get("scores", [])
        counts["20-vote ties (10/10)"] += sum(v == 1 for v in votes) * 2 == len(votes)
        rows["labels: 20-vote majority = safe_rate label"].append(
            vote_label(votes, record["category"]) == safe_label[i]
        )
        counts["trustlab parse failures"] += o_value == ""
        low = p_text.lower()
        counts["port texts with no safe/unsafe word"] += "safe" not in low
        counts["trustlab texts with no JSON judgement but a safe/unsafe word"] += (
            o_value == "" and "safe" in o_text.lower()
        )
        correct["port"].append(p_verdict == safe_label[i])
        correct["trustlab"].append(as_binary(o_value) == safe_label[i])
        key = (p_verdict, o_value or "''")
        pairs[key] = pairs.get(key, 0) + 1
        per_item.append({"item": i, "label": safe_label[i], "port_text": p_text,
                         "port_verdict": p_verdict, "trustlab_text": o_text,
                         "trustlab_value": o_value})  # fmt: skip
    n = len(items)
    if items_out is not None:
        items_out.write_text("".join(json.dumps(row) + "\n" for row in per_item))
    return {
        "items": n,
        "rows": {k: share(v) for k, v in rows.items()},
        "counts": counts,
        "accuracy vs safe_rate labels": {k: share(v) for k, v in correct.items()},
        "verdicts": {f"{k} (port, trustlab)": v for k, v in sorted(pairs.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port-task", type=Path, required=True, help="the port's case_bench.py")
    parser.add_argument("--data", type=Path, required=True, help="CASEBench_data.json")
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--limit", type=int, default=100, help="the first N records (0: all)")
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp/casebench-side-by-side"))
    parser.add_argument("--max-connections", type=int, default=32)
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument(
        "--from-logs",
        nargs=2,
        type=Path,
        metavar=("PORT_LOG", "TRUSTLAB_LOG"),
        help="compare two finished .eval logs instead of running (no server)",
    )
    args = parser.parse_args(argv)
    args.limit = args.limit or None
    for name, path in (("--port-task", args.port_task), ("--data", args.data)):
        if not path.is_file():
            raise SystemExit(f"{name}: expected an existing file, got {path}")
    args.log_dir.mkdir(parents=True, exist_ok=True)
    port_module = load_port(args.port_task)
    if args.from_logs:
        from inspect_ai.log import read_eval_log

        port_log, ours_log = (read_eval_log(str(path)) for path in args.from_logs)
    else:
        port = free_port()
        server = start_server(args.model, port, args.log_dir / "server.log")
        try:
            port_log, ours_log = run_both(args, port_module, f"http://127.0.0.1:{port}/v1")
        finally:
            server.terminate()
            server.wait(timeout=30)
    table = compare(port_log, ours_log, port_module, args.data, args.log_dir / "items.jsonl")
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    print(f"\nper-item agreement over {table['items']} items")
    for key, value in table["rows"].items():
        print(f"  {key:<70} {value}")
    for section in ("counts", "accuracy vs safe_rate labels", "verdicts"):
        print(f"{section}:")
        for key, value in table[section].items():
            print(f"  {key:<70} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
