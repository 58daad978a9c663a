"""A resume whose data file changed since the unfinished run is refused (review 55): the path was
the same, so eval_retry kept the samples judged on the old records and asked the rest of the new
file's, and the report read the log as one run."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("inspect_ai")

from trustlab.errors import InputError  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402
from trustlab.safety.context import synthetic_casebench  # noqa: E402


def test_a_changed_data_file_is_not_resumed_and_the_same_content_is(tmp_path):
    records = synthetic_casebench().records()
    data, logs = tmp_path / "data.json", tmp_path / "logs"
    old, new = json.dumps(records[:4]), json.dumps(records[4:8])
    data.write_text(old)
    args = {"data": str(data)}
    model = "casebench-flaky/after2-changed-data"
    with pytest.raises(Exception, match="broke on purpose"):
        run_eval("casebench", model, log_dir=logs, task_args=args)
    data.write_text(new)  # the same path, other records
    with pytest.raises(InputError, match=r"^data: expected the content .* changed since; start"):
        run_eval("casebench", model, log_dir=logs, task_args=args)
    data.write_text(old)  # its content again: resumed
    (entry,) = run_eval("casebench", model, log_dir=logs, task_args=args).logs
    assert entry["resumed"] is not None


def test_only_arguments_named_for_data_are_read(tmp_path, monkeypatch):
    """A choice that shares its name with a folder of the working directory (-T suite=code
    beside a code/ folder) is not hashed: only data, *_data, *path, *file, *dir, *folder are."""
    from trustlab.evals.registry import data_digests

    monkeypatch.chdir(tmp_path)
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "big.bin").write_bytes(b"x")
    (tmp_path / "mine.json").write_text("[]")
    digests = data_digests({"suite": "code", "data": "mine.json", "prompts_file": "mine.json"})
    assert set(digests) == {"data", "prompts_file"}
