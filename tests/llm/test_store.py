"""ResultStore: results survive interruptions and crashes, and a resumed run redoes nothing."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import uuid
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.llm import ResultStore, generate_texts


class Echo:
    """A LanguageModel that returns each prompt."""

    name = "echo"

    def generate(self, prompts, max_new_tokens=64, **settings):
        return list(prompts)


ITEMS = list(range(12))


def square(k):
    return {"k": k, "square": k * k}


class Interrupt(Exception):
    pass


def counting(fn, calls, fail_at=None, error=Interrupt):
    """``fn`` that records each call in ``calls`` and raises ``error`` when called on ``fail_at``."""

    def wrapped(arg):
        calls.append(arg)
        if arg == fail_at:
            raise error(f"stopped at {arg}")
        return fn(arg)

    return wrapped


@pytest.fixture
def store(tmp_path):
    with ResultStore(tmp_path / "results.sqlite") as s:
        yield s


def test_map_returns_every_item_in_order_and_stores_it(store):
    calls = []
    result = store.map("run", reversed(ITEMS), counting(square, calls))
    assert list(result) == ITEMS[::-1]
    assert result == {k: square(k) for k in ITEMS}
    assert store.items("run") == result
    assert Counter(calls) == Counter(ITEMS)


@pytest.mark.parametrize("error", [Interrupt, KeyboardInterrupt])
def test_interrupted_run_resumes_without_recomputing(tmp_path, error):
    with ResultStore(tmp_path / "ref.sqlite") as ref:
        reference = ref.map("run", ITEMS, square)
    path, first, second, k = tmp_path / "r.sqlite", [], [], 7
    with ResultStore(path) as store, pytest.raises(error):
        store.map("run", ITEMS, counting(square, first, fail_at=k, error=error))
    with ResultStore(path) as store:
        assert store.done("run") == set(ITEMS[:k])
        resumed = store.map("run", ITEMS, counting(square, second))
    assert resumed == reference
    assert first == ITEMS[: k + 1]  # k was in progress when the run stopped
    assert second == ITEMS[k:]  # only what was missing, each once


def test_killed_process_loses_at_most_the_item_in_progress(tmp_path):
    path, log, k = tmp_path / "r.sqlite", tmp_path / "calls.txt", 5
    child = textwrap.dedent(
        f"""
        import sys, time
        from trustlab.llm.store import ResultStore
        log = open({str(log)!r}, "a")
        def fn(item):
            log.write(f"{{item}}\\n"); log.flush()
            if item == {k}:
                print("busy", flush=True)
                time.sleep(120)
            return {{"k": item, "square": item * item}}
        ResultStore({str(path)!r}).map("run", range({len(ITEMS)}), fn)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "busy"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    child_calls = [int(line) for line in log.read_text().split()]
    assert child_calls == ITEMS[: k + 1]
    resumed_calls = []
    with ResultStore(path) as store:
        result = store.map("run", ITEMS, counting(square, resumed_calls))
    assert result == {i: square(i) for i in ITEMS}
    assert resumed_calls == ITEMS[k:]


def test_two_threads_write_different_items(store):
    halves = [ITEMS[0::2], ITEMS[1::2]]
    errors = []

    def work(keys):
        try:
            for key in keys:
                store.put("run", key, square(key))
        except Exception as exc:  # reported below: an exception in a thread is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(half,)) for half in halves]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.items("run") == {k: square(k) for k in ITEMS}


def test_results_persist_across_instances(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.put("a", "x", [1, 2])
        store.put("b", 3, None)
    with ResultStore(path) as store:
        assert store.runs() == ["a", "b"]
        assert store.get("a", "x") == [1, 2]
        assert store.has("b", 3) and store.get("b", 3, default="absent") is None
        assert not store.has("b", 4) and store.get("b", 4, default="absent") == "absent"


def test_integer_and_string_keys_are_distinct(store):
    store.put("run", 1, "int")
    store.put("run", "1", "str")
    assert store.done("run") == {1, "1"}
    assert store.get("run", 1) == "int" and store.get("run", "1") == "str"


def test_put_replaces_and_clear_deletes_one_run(store):
    store.put("run", "a", 1)
    store.put("run", "a", 2)
    store.put("other", "a", 3)
    assert store.get("run", "a") == 2
    assert store.clear("run") == 1
    assert store.runs() == ["other"] and store.done("run") == set()


def test_mapping_items_pass_their_inputs(store):
    result = store.map("run", {"a": 2, "b": 3}, lambda x: x * 10)
    assert result == {"a": 20, "b": 30}


def test_numpy_values_are_stored_as_plain_numbers(store):
    store.put("run", "v", {"x": np.float32(0.5), "n": np.int64(3), "a": np.arange(3)})
    assert store.get("run", "v") == {"x": 0.5, "n": 3, "a": [0, 1, 2]}
    store.put("run", "nan", np.array([1.0, np.nan]))  # trustlab's one JSON converter
    assert store.get("run", "nan") == [1.0, None]


def test_a_result_is_stored_as_its_dict(store):
    result = generate_texts(Echo(), ["ab"], 2)
    store.put("run", "g", result)
    assert store.get("run", "g") == result.to_dict()


def test_progress_reports_each_stored_item(store):
    store.put("run", 0, square(0))
    seen = []
    store.map("run", range(4), square, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory):
    with ResultStore(tmp_path_factory.mktemp("rt") / "r.sqlite") as s:
        yield s


@settings(max_examples=40, deadline=None)
@given(value=json_values, key=st.one_of(st.integers(), st.text(min_size=1, max_size=10)))
def test_any_json_value_round_trips(shared_store, value, key):
    run = uuid.uuid4().hex  # a fresh run per example
    shared_store.put(run, key, value)
    assert shared_store.get(run, key) == value
    assert shared_store.done(run) == {key}


def test_non_serialisable_value_is_an_input_error(store):
    with pytest.raises(InputError, match="JSON-serialisable.*object"):
        store.put("run", "x", object())
    with pytest.raises(InputError, match="JSON-serialisable"):
        store.map("run", ["y"], lambda _: {1, 2})
    assert store.done("run") == set()


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda s: s.put("", "x", 1), "run"),
        (lambda s: s.put(None, "x", 1), "run"),
        (lambda s: s.put("run", (1, 2), 1), "item"),
        (lambda s: s.put("run", True, 1), "item"),
        (lambda s: s.map("run", "abc", str), "items"),
        (lambda s: s.map("run", [1], "not callable"), "fn"),
    ],
)
def test_bad_arguments_name_the_argument(store, call, argument):
    with pytest.raises(InputError, match=f"^{argument}: expected"):
        call(store)


def test_closed_store_refuses_use(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    store.close()
    with pytest.raises(InputError, match="closed"):
        store.put("run", "x", 1)


def test_folder_path_is_refused(tmp_path):
    with pytest.raises(InputError, match="^path: expected"):
        ResultStore(tmp_path)
