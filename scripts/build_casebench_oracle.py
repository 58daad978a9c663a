"""Build the CASE-Bench test oracle (``tests/safety/casebench_authors_data/oracle.json.gz``) from
a copy of the authors' repository (BriansIDP/CASEBench).

The authors' repository has no licence and its queries come from SORRY-Bench (gated), so no
CASE-Bench file ships with trustlab and no query or context text enters the oracle. What it
keeps is enough to re-score every released output file and to rerun the human statistics::

    git clone https://github.com/BriansIDP/CASEBench /tmp/cb   # commit 135f221
    python scripts/build_casebench_oracle.py /tmp/cb

Per item (index 0-899 of ``data/CASEBench_data.json``, which every ``exp/`` file follows): a
query id (``q000``-``q449`` in order of first appearance; the two records of one query share it),
the category, ``context_intended_to_be_safe``, ``safe_rate``, the 21 votes of the ``exp/`` files
and the 20 votes of the data file. Per output file ``exp/safety_MODEL/output_MODE[_ABLATION].json``:
the model, mode, ablation (``null`` for the full context) and the 900 predictions exactly as
released ("" / "safe" / "unsafe", floats, ints).

Before writing, the script checks that the records line up by index: every output file has 900
records, the same query text, safe_rate, category, context_intended_to_be_safe and 21 votes per
index as the data file and the other output files, and its prediction under the model's name;
the data file's 20 votes are the first 20 of the 21. Anything else stops the script with the file
and the index. The output is byte-for-byte deterministic (sorted keys, gzip mtime 0).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from pathlib import Path

MODES = ("binary", "score", "logits")
ITEM_FIELDS = ("safe_rate", "category", "context_intended_to_be_safe")
RECORD_KEYS = frozenset(
    {"query", "context", "scores", "safe_rate", "category", "context_intended_to_be_safe"}
)
N_RECORDS = 900
N_VOTES = 21
DEFAULT_OUT = Path(__file__).resolve().parents[1] / (
    "tests/safety/casebench_authors_data/oracle.json.gz"
)


class OracleError(Exception):
    """The authors' files do not line up as the oracle assumes."""


def _load(path: Path) -> list:
    records = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(records, list) or len(records) != N_RECORDS:
        raise OracleError(f"{path}: expected a list of {N_RECORDS} records")
    return records


def _parse_name(path: Path) -> tuple[str, str, str | None]:
    """(model, mode, ablation) of ``exp/safety_MODEL/output_MODE[_ABLATION].json``."""
    folder, stem = path.parent.name, path.stem
    if not folder.startswith("safety_") or not stem.startswith("output_"):
        raise OracleError(f"{path}: expected exp/safety_MODEL/output_MODE[_ABLATION].json")
    mode, _, ablation = stem[len("output_") :].partition("_")
    if mode not in MODES:
        raise OracleError(f"{path}: unknown mode {mode!r} (expected one of {MODES})")
    return folder[len("safety_") :], mode, ablation or None


def _query_ids(data: list) -> list[str]:
    """One id per record, shared by the records of one query (paired by the query text)."""
    ids: dict[str, str] = {}
    out = []
    for i, record in enumerate(data):
        query = record.get("query")
        if not isinstance(query, str) or not query:
            raise OracleError(f"data file: record {i}: no query text")
        out.append(ids.setdefault(query, f"q{len(ids):03d}"))
    counts: dict[str, list[bool]] = {}
    for qid, record in zip(out, data, strict=True):
        counts.setdefault(qid, []).append(bool(record["context_intended_to_be_safe"]))
    bad = [q for q, flags in counts.items() if sorted(flags) != [False, True]]
    if bad:
        raise OracleError(
            f"data file: {len(bad)} queries without exactly one safe- and one unsafe-intended "
            f"record (first: {bad[0]})"
        )
    return out


def build(repo: Path, commit: str) -> dict:
    """The oracle as a JSON-ready dict (raises OracleError when the files do not line up)."""
    data = _load(repo / "data" / "CASEBench_data.json")
    files = sorted((repo / "exp").glob("safety_*/output_*.json"))
    if not files:
        raise OracleError(f"{repo / 'exp'}: no output files (exp/safety_MODEL/output_*.json)")
    ids = _query_ids(data)
    reference = None  # the per-index fields of the first output file
    outputs = []
    for path in files:
        model, mode, ablation = _parse_name(path)
        name = path.relative_to(repo).as_posix()
        records = _load(path)
        predictions = []
        for i, (record, base) in enumerate(zip(records, data, strict=True)):
            extra = set(record) - RECORD_KEYS
            if extra != {model}:
                raise OracleError(
                    f"{name}: record {i}: expected the prediction under {model!r} as the only "
                    f"extra key, got {sorted(extra)}"
                )
            scores = record["scores"]
            if len(scores) != N_VOTES or any(s not in (1, 2) for s in scores):
                raise OracleError(f"{name}: record {i}: expected {N_VOTES} votes of 1 or 2")
            if record["query"] != base["query"]:
                raise OracleError(f"{name}: record {i}: query differs from the data file's")
            for key in ITEM_FIELDS:
                if record[key] != base[key]:
                    raise OracleError(f"{name}: record {i}: {key} differs from the data file's")
            if scores[:20] != base["scores"]:
                raise OracleError(
                    f"{name}: record {i}: the data file's votes are not the first 20 of the 21"
                )
            value = record[model]
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise OracleError(f"{name}: record {i}: prediction {value!r} is not text or number")
            predictions.append(value)
        fields = [[r["scores"], *(r[k] for k in ITEM_FIELDS)] for r in records]
        if reference is None:
            reference = fields
        elif fields != reference:
            i = next(j for j, (a, b) in enumerate(zip(fields, reference, strict=True)) if a != b)
            raise OracleError(
                f"{name}: record {i}: votes, safe_rate, category or context_intended_to_be_safe "
                f"differ from {files[0].relative_to(repo).as_posix()}'s"
            )
        outputs.append(
            {
                "file": name,
                "model": model,
                "mode": mode,
                "ablation": ablation,
                "predictions": predictions,
            }
        )
    items = [
        {
            "index": i,
            "query_id": ids[i],
            "category": base["category"],
            "context_intended_to_be_safe": base["context_intended_to_be_safe"],
            "safe_rate": base["safe_rate"],
            "scores": reference[i][0],
            "data_scores": base["scores"],
        }
        for i, base in enumerate(data)
    ]
    return {
        "source": {
            "repository": "https://github.com/BriansIDP/CASEBench",
            "commit": commit,
            "note": "test-oracle data only; no query or context text; never shipped",
        },
        "items": items,
        "outputs": outputs,
    }


def write(oracle: dict, out: Path) -> bytes:
    """Write the oracle as deterministic gzip'd JSON; return the bytes written."""
    text = json.dumps(oracle, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("ascii"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="your copy of BriansIDP/CASEBench")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write")
    parser.add_argument(
        "--commit", default="135f221", help="the commit your copy is of (recorded in the file)"
    )
    args = parser.parse_args(argv)
    try:
        oracle = build(args.repo, args.commit)
    except (OracleError, OSError, KeyError, json.JSONDecodeError) as exc:
        print(f"build_casebench_oracle: {exc}", file=sys.stderr)
        return 1
    written = write(oracle, args.out)
    print(
        f"wrote {args.out} ({len(written):,} bytes): {len(oracle['items'])} items, "
        f"{len(oracle['outputs'])} output files"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
