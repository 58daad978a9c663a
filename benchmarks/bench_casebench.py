"""CASE-Bench logit mode on SmolLM2: the casebench task through the trustlab provider (batched)
against one-at-a-time transformers generation of one token with scores, on the same prompts.

Prints items per second for:

- the ``casebench`` task (``mode=logits``: greedy, one token, ``top_logprobs=20``) through
  ``trustlab/smollm2-135m-instruct`` in inspect, at several ``-M max_batch_size`` values;
- ``LocalModel.completions`` called directly on the same chat prompts in one batch (the
  provider's work without inspect), with top_logprobs 20 and 0 (the cost of the alternatives)
  and with the prompts sorted by length (the cost of padding);
- one prompt at a time with transformers' ``generate`` (``max_new_tokens=1``,
  ``output_scores``) and a top-20 of the first token's log-softmax;
- inspect's per-sample overhead: the same task on a model that answers at once.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_casebench.py [--n 60] [--threads 1]
        [--model smollm2-135m-instruct] [--device cpu]

``--model`` takes what :func:`trustlab.llm.load_model` takes (a name, a ``.gguf`` file or a model
folder); ``--device cuda`` runs both sides on a GPU.
"""

from __future__ import annotations

import argparse
import tempfile
import time


def _answer_at_once() -> str:
    from inspect_ai.model import ModelAPI, ModelOutput, modelapi

    @modelapi(name="bench-casebench-trivial")
    class Trivial(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):
            return ModelOutput.from_content(self.model_name, "safe")

    return "bench-casebench-trivial/model"


def _timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=60, help="items (the synthetic set has 60)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--repeat", type=int, default=1, help="run the items this many times (epochs)"
    )
    args = parser.parse_args()

    import torch
    from inspect_ai import eval as inspect_eval

    from trustlab.evals import use_local_model
    from trustlab.evals.casebench import casebench
    from trustlab.llm import load_model

    torch.set_num_threads(args.threads)
    lm = load_model(args.model, device=args.device)
    model = f"trustlab/{use_local_model(lm)}"
    task = casebench(mode="logits")
    base = [s.input for s in task.dataset][: args.n]
    prompts = base * args.repeat  # inspect runs the repeats as epochs
    n = len(prompts)
    logs = tempfile.mkdtemp()
    rendered = [
        lm.tokenizer.apply_chat_template(
            [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
        )
        for p in prompts
    ]
    lengths = [len(lm.tokenizer(r, add_special_tokens=False)["input_ids"]) for r in rendered]
    n_params = sum(p.numel() for p in lm.model.parameters())

    def through_inspect(batch: int, on: str = model, window: float = 0.01, **options) -> float:
        def run():
            (log,) = inspect_eval(
                casebench(mode="logits"), model=on, limit=len(base), epochs=args.repeat,
                display="none", log_dir=logs, **options,
                model_args={"max_batch_size": batch, "batch_window": window} if on == model else {},
            )  # fmt: skip
            assert log.status == "success", log.error

        return _timed(run)

    inspect_eval(casebench(mode="logits"), model=model, limit=4, display="none", log_dir=logs)
    provider = {batch: through_inspect(batch) for batch in (8, 32, 64)}
    # a longer wait for samples to batch, and inspect writing the log at the end only
    window = through_inspect(64, window=0.05)
    realtime_off = through_inspect(64, log_realtime=False)

    def direct(top: int, order: list[str]) -> float:
        return _timed(lambda: lm.completions(order, 1, top_logprobs=top, batch_size=len(order)))

    by_length = sorted(prompts, key=len)
    start = time.perf_counter()
    ours_20 = lm.completions(prompts, 1, top_logprobs=20, batch_size=len(prompts))
    direct_20 = time.perf_counter() - start
    direct_0 = direct(0, prompts)
    direct_sorted = _timed(lambda: lm.completions(by_length, 1, top_logprobs=20, batch_size=8))
    direct_unsorted_8 = _timed(lambda: lm.completions(prompts, 1, top_logprobs=20, batch_size=8))

    singles: list[tuple[str, list[float]]] = []

    def one_at_a_time() -> None:
        singles.clear()
        for prompt in prompts:
            ids = lm.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}],
                add_generation_prompt=True,
                return_tensors="pt",
            )
            ids = (ids["input_ids"] if hasattr(ids, "keys") else ids).to(lm.model.device)
            with torch.inference_mode():
                out = lm.model.generate(
                    ids, max_new_tokens=1, do_sample=False, output_scores=True,
                    return_dict_in_generate=True, pad_token_id=lm.tokenizer.eos_token_id,
                )  # fmt: skip
                top = torch.topk(torch.log_softmax(out.scores[0][0].double(), -1), 20)[0].tolist()
            new = out.sequences[0, ids.shape[1] :]
            singles.append((lm.tokenizer.decode(new, skip_special_tokens=True), top))

    single = _timed(one_at_a_time)

    trivial = _answer_at_once()
    through_inspect(0, trivial)  # warm-up
    overhead = through_inspect(0, trivial)
    overhead_off = through_inspect(0, trivial, log_realtime=False)

    print(
        f"{n} CASE-Bench logit-mode items (prompt tokens {min(lengths)}-{max(lengths)}, mean "
        f"{sum(lengths) / n:.0f}), {lm.name}, {args.threads} thread(s), on {lm.model.device}"
    )
    for batch, seconds in provider.items():
        print(
            f"  casebench task, trustlab provider, max_batch_size {batch:>2}: {n / seconds:7.1f} "
            f"items/s  ({single / seconds:.2f}x one at a time)"
        )
    for label, seconds in [("batch_window 0.05", window), ("log_realtime=False", realtime_off)]:
        print(
            f"  ... max_batch_size 64, {label:18}: {n / seconds:7.1f} items/s  "
            f"({single / seconds:.2f}x one at a time)"
        )
    print(f"  LocalModel.completions, one batch, top-20:      {n / direct_20:7.1f} items/s")
    print(f"  LocalModel.completions, one batch, no top:      {n / direct_0:7.1f} items/s")
    print(f"  LocalModel.completions, batches of 8:           {n / direct_unsorted_8:7.1f} items/s")
    print(f"  ... batches of 8, prompts sorted by length:     {n / direct_sorted:7.1f} items/s")
    print(f"  one at a time (transformers generate, top-20):  {n / single:7.1f} items/s")
    same = sum(c.text == t for c, (t, _) in zip(ours_20, singles, strict=True))
    gaps = [
        max(
            abs(a - b)
            for a, b in zip(sorted(v for _, v in c.top_logprobs[0])[::-1], top, strict=True)
        )
        for c, (_, top) in zip(ours_20, singles, strict=True)
        if c.top_logprobs  # empty when the first token ends the text
    ]
    gap = max(gaps, default=0.0)
    print(
        f"  LocalModel.completions against one at a time: identical first tokens {same}/{n}, "
        f"largest top-20 log-probability difference {gap:.1e}"
    )
    print(
        f"  inspect overhead (a model that answers at once): {1000 * overhead / n:.1f} ms/sample"
        f" ({1000 * overhead_off / n:.1f} with log_realtime=False)"
    )
    # the work is one prefill per item: about 2 * parameters * prompt tokens floating-point ops
    flops = 2.0 * n_params * sum(lengths)
    print(
        f"  prefill arithmetic: {flops / 1e9:.0f} GFLOP in all; one at a time runs at "
        f"{flops / single / 1e9:.0f} GFLOP/s, the best batched run at "
        f"{flops / min(provider.values()) / 1e9:.0f} GFLOP/s"
    )


if __name__ == "__main__":
    main()
