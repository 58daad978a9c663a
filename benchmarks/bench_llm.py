"""Local language-model runtime and server: load times, tokens per second, requests per second.

On SmolLM2-135M-Instruct (float32, CPU):

- runtime: the first load from the GGUF file (dequantization, into a temporary cache folder) and
  the cached load from safetensors; then tokens per second for activation capture (prompt tokens
  through the decoder, positions="all") and greedy generation (new tokens) at batch 1, 8 and 32.
  The peer is plain transformers on the same prompts one at a time, unpadded
  (``output_hidden_states=True`` and ``model.generate``), at batch 8; the ratio is peer seconds /
  ours.
- serving: requests per second of the OpenAI-compatible server (``make_server``) at 1, 8 and 32
  concurrent clients, each sending chat requests for 8 new tokens (greedy) one after another over
  HTTP, with batching (``max_batch_size=32``) against one-at-a-time serving (``max_batch_size=1``)
  in the same process; the ratio is batched / one at a time. The texts of both modes must match.

Run: python benchmarks/bench_llm.py [--quick] [--threads 1] [--no-first-load]
     [--part all|runtime|serving]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time

TOPICS = ["the sea", "a city at night", "bread", "winter", "a lost key", "music", "trains", "bees"]
FORMS = [
    "Write a long story about {}.",
    "Explain in detail how {} changed history.",
    "Describe {} to a child, step by step.",
    "List many facts about {} and explain each one.",
]
PROMPTS = [form.format(topic) for form in FORMS for topic in TOPICS]  # 32 prompts


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def new_token_count(lm, texts) -> int:
    """New tokens, counted by re-encoding the returned text (generation may stop at EOS)."""
    return sum(len(lm.tokenizer(t, add_special_tokens=False).input_ids) for t in texts)


def prompt_token_count(lm, prompts) -> int:
    return sum(len(lm.tokenizer(p).input_ids) for p in prompts)


def peer_activations(lm, prompts, torch) -> None:
    with torch.inference_mode():
        for p in prompts:
            ids = lm.tokenizer(p, return_tensors="pt").input_ids
            lm.model(ids, output_hidden_states=True)


def peer_generate(lm, prompts, max_new_tokens, torch) -> list[str]:
    out = []
    with torch.inference_mode():
        for p in prompts:
            text = lm.tokenizer.apply_chat_template(
                [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
            )
            ids = lm.tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
            tokens = lm.model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False)
            out.append(lm.tokenizer.decode(tokens[0, ids.shape[1] :], skip_special_tokens=True))
    return out


def row(task: str, batch: int | str, n: int, tokens: int, seconds: float) -> None:
    print(
        f"{task:<22} {batch!s:>6} {n:>8} {tokens:>8} {seconds:>9.2f} {tokens / seconds:>9.1f}",
        flush=True,
    )


def closed_loop(url: str, model: str, clients: int, total: int, max_new: int) -> dict:
    """``clients`` threads, each sending its share of ``total`` requests one after another."""
    import httpx

    texts: dict[int, str] = {}
    latencies: list[float] = []
    errors: list[str] = []

    def client(i: int) -> None:
        with httpx.Client(timeout=600) as http:
            for k in range(i, total, clients):
                body = {"model": model, "max_tokens": max_new, "temperature": 0,
                        "messages": [{"role": "user", "content": PROMPTS[k % len(PROMPTS)]}]}  # fmt: skip
                start = time.perf_counter()
                response = http.post(url + "/v1/chat/completions", json=body)
                latencies.append(time.perf_counter() - start)
                if response.status_code != 200:
                    errors.append(response.text)
                    continue
                texts[k % len(PROMPTS)] = response.json()["choices"][0]["message"]["content"]

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    if errors:
        raise SystemExit(f"{len(errors)} requests failed, e.g. {errors[0]}")
    return {"rate": total / seconds, "p50": statistics.median(latencies), "texts": texts}


def bench_serving(lm, concurrencies: tuple[int, ...], max_new: int) -> None:
    from trustlab.llm import make_server

    totals = {1: 8, 8: 32, 32: 64}
    print(
        f"\nserving: chat requests of {max_new} new tokens (greedy), closed loop over HTTP; "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(f"{'mode':<16} {'clients':>8} {'requests':>9} {'req/s':>8} {'p50 s':>7} {'batches':>8}")
    results: dict[tuple[str, int], dict] = {}
    modes = {"one at a time": 1, "batched": 32}
    # both servers live side by side and take turns, so a change in the machine's load hits both
    servers = {mode: make_server(lm, max_batch_size=size).start() for mode, size in modes.items()}
    try:
        for server in servers.values():
            closed_loop(server.url, lm.name, 1, 1, max_new)  # warm-up
        for clients in concurrencies:
            for mode, server in servers.items():
                before = server.n_batches
                res = closed_loop(server.url, lm.name, clients, totals[clients], max_new)
                results[mode, clients] = res
                print(
                    f"{mode:<16} {clients:>8} {totals[clients]:>9} {res['rate']:>8.2f} "
                    f"{res['p50']:>7.2f} {server.n_batches - before:>8}",
                    flush=True,
                )
    finally:
        for server in servers.values():
            server.shutdown()
    print()
    for clients in concurrencies:
        one, batched = results["one at a time", clients], results["batched", clients]
        same = sum(one["texts"][k] == batched["texts"].get(k) for k in one["texts"])
        print(
            f"{clients:>2} clients: batched / one at a time = {batched['rate'] / one['rate']:.2f}x"
            f" requests per second; identical texts {same}/{len(one['texts'])}"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch/clients 1 and 8, fewer tokens")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--no-first-load", action="store_true", help="skip the GGUF load")
    parser.add_argument("--part", choices=("all", "runtime", "serving"), default="all")
    parser.add_argument("--model", default="smollm2-135m-instruct")
    args = parser.parse_args()

    import torch

    from trustlab.llm import load_model

    torch.set_num_threads(args.threads)
    batch_sizes = (1, 8) if args.quick else (1, 8, 32)
    max_new = 16 if args.quick else 32

    with tempfile.TemporaryDirectory(prefix="bench_llm_") as tmp:
        if args.no_first_load or args.part == "serving":
            cache = None  # the default cache folder; fill it first if it is empty
            del load_model(args.model).model
        else:
            cache = tmp
            first, first_s = timed(load_model, args.model, cache_dir=cache)
            del first
            print(f"first load (GGUF -> dequantize -> cache): {first_s:.1f} s", flush=True)
        lm, cached_s = timed(load_model, args.model, cache_dir=cache)
        print(f"cached load (safetensors): {cached_s:.2f} s (target < 5 s)", flush=True)
    print(f"{lm!r}, torch threads {torch.get_num_threads()}")

    if args.part in ("all", "serving"):
        bench_serving(lm, batch_sizes, 8)
    if args.part == "serving":
        return
    print(f"\n{'task':<22} {'batch':>6} {'prompts':>8} {'tokens':>8} {'seconds':>9} {'tok/s':>9}")
    ours_at_8 = {}
    for batch in batch_sizes:
        prompts = PROMPTS[:batch]
        layers = list(range(lm.n_layers))
        _, seconds = timed(lm.activations, prompts, layers, "all", batch_size=batch)
        row("activations (all)", batch, batch, prompt_token_count(lm, prompts), seconds)
        texts, gen_s = timed(lm.generate, prompts, max_new, batch_size=batch)
        row(f"generate {max_new} new", batch, batch, new_token_count(lm, texts), gen_s)
        if batch == 8:
            ours_at_8 = {"activations": seconds, "generate": gen_s, "texts": texts}

    if ours_at_8:
        prompts = PROMPTS[:8]
        _, peer_act_s = timed(peer_activations, lm, prompts, torch)
        row("transformers acts", "1x8", 8, prompt_token_count(lm, prompts), peer_act_s)
        peer_texts, peer_gen_s = timed(peer_generate, lm, prompts, max_new, torch)
        row(f"transformers gen {max_new}", "1x8", 8, new_token_count(lm, peer_texts), peer_gen_s)
        same = sum(a == b for a, b in zip(peer_texts, ours_at_8["texts"], strict=True))
        print(
            f"\nbatch 8 vs transformers one at a time: activations "
            f"{peer_act_s / ours_at_8['activations']:.2f}x, generation "
            f"{peer_gen_s / ours_at_8['generate']:.2f}x; identical greedy texts {same}/8"
        )


if __name__ == "__main__":
    main()
