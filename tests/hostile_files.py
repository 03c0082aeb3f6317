"""A generated corpus of hostile evaluation logs, one family per format jevalkit reads (issue 24,
"close the classes"): a valid seed file per format, then every field (three levels deep) replaced
by values of the wrong type, deep nesting (past the JSON parser's limit, and 900 deep, under it),
5,000-digit integers, NaN; and whole-file damage
(empty, truncated, non-UTF-8, nested 100,000 deep, a zip bomb, archive members not listed).

``corpus(root)`` writes them all under ``root`` and returns ``(name, path, format, options)``
tuples; it takes well under a second beyond inspect_ai's import.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jevalkit._paths import data_dir

EXAMPLES = data_dir() / "examples"
FIXTURES = Path(__file__).parent / "io" / "fixtures"
DATE = "2026-11-30T10-00-00.123456"
BIG = "9" * 5000  # python refuses to parse integers over 4,300 digits by default
DEEP = "[" * 100_000 + "]" * 100_000
# raw JSON text of values of the wrong type; each path receives a few of them in turn
HOSTILE = [
    "null",
    "[]",
    "{}",
    '"x"',
    "-1",
    "1e308",
    "true",
    "[[1, [2]]]",
    BIG,
    "NaN",
    DEEP[:2000] + DEEP[-2000:],
    # under the JSON parser's recursion limit: parses, then breaks every recursive step after
    # it unless the reader bounds the depth (issue 37.12: promptfoo vars 900 deep)
    DEEP[:900] + DEEP[-900:],
    '{"a": ' * 900 + "1" + "}" * 900,
]
MARK = "\u0000HOSTILE\u0000"


def _paths(value: Any, prefix: tuple = (), depth: int = 3) -> Iterator[tuple]:
    """Every dict key and the first list element, down to ``depth`` levels."""
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key), depth - 1)
    elif isinstance(value, list) and value:
        yield (*prefix, 0)
        yield from _paths(value[0], (*prefix, 0), depth - 1)


def _replaced(doc: Any, path: tuple, raw: str) -> str:
    """``doc`` as JSON text with the value at ``path`` replaced by the raw JSON text ``raw``."""
    copy = json.loads(json.dumps(doc))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = MARK
    return json.dumps(copy).replace(json.dumps(MARK), raw)


def mutations(doc: Any, per_path: int = 2) -> Iterator[tuple[str, str]]:
    """(label, JSON text) for each path of ``doc`` with ``per_path`` hostile values, rotating."""
    i = 0
    for path in _paths(doc):
        for _ in range(per_path):
            raw = HOSTILE[i % len(HOSTILE)]
            i += 1
            yield ".".join(map(str, path)) + "=" + raw[:12], _replaced(doc, path, raw)


def damage(text: bytes) -> Iterator[tuple[str, bytes]]:
    """Whole-file damage of a valid file's bytes."""
    yield "empty", b""
    yield "blank", b"\n \n"
    yield "truncated", text[: len(text) // 2]
    yield "not-utf8", text[:40] + b"\xff\xfe\xc3\x28" + text[40:]
    yield "deep", DEEP.encode()
    yield "bigint", BIG.encode()
    yield "scalar", b"5"
    yield "list-of-scalars", b"[1, 2, 3]\n"


def _inspect_log(path: Path, fmt: str) -> None:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    ids = ["s0", "s1"]
    spec = EvalSpec(
        created="2026-11-30T00:00:00+00:00",
        task="tiny",
        dataset=EvalDataset(samples=2, sample_ids=ids),
        model="m",
        config=EvalConfig(epochs=1),
    )
    samples = [
        EvalSample(
            id=i,
            epoch=1,
            input="q",
            target="t",
            output=ModelOutput.from_content("m", "answer"),
            scores={"match": Score(value="C")},
        )
        for i in ids
    ]
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path), format=fmt)


def _rezip(src: Path, dest: Path, replace: dict[str, bytes], drop: tuple[str, ...] = ()) -> None:
    """A copy of the zip ``src`` with some members replaced (deflated) or dropped."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename in drop:
                continue
            if info.filename in replace:
                new.writestr(info.filename, replace.pop(info.filename))
            else:
                new.writestr(info, _raw_member(src, info), compress_type=zipfile.ZIP_STORED)
        for name, data in replace.items():
            new.writestr(name, data)


def _raw_member(src: Path, info: zipfile.ZipInfo) -> bytes:
    from jevalkit.io import read_zip_member

    return read_zip_member(src, info.filename)


def _bomb(dest: Path, header: bytes) -> None:
    """A member that inflates past jevalkit's 256 MiB cap (272 MiB of spaces in 1.2 MB)."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("header.json", header)
        with z.open("samples/s0_epoch_1.json", "w", force_zip64=True) as fh:
            fh.write(b'{"id": "s0", "epoch": 1, "scores": {}}')
            block = b" " * (1 << 24)
            for _ in range(17):
                fh.write(block)


def _write(root: Path, name: str, data: bytes | str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def corpus(root: Path) -> list[tuple[str, Path, str, dict]]:
    """Write the corpus under ``root``; (name, path, format, reader options) per file."""
    out: list[tuple[str, Path, str, dict]] = []

    def jsonl_family(fmt: str, records: list[dict], name: str, options: dict) -> None:
        text = "".join(json.dumps(r) + "\n" for r in records)
        for label, bad in damage(text.encode()):
            out.append((f"{fmt}:{label}", _write(root / fmt / label, name, bad), fmt, options))
        for k, (label, line) in enumerate(mutations(records[0])):
            rest = "".join(json.dumps(r) + "\n" for r in records[1:])
            path = _write(root / fmt / f"m{k}", name, line + "\n" + rest)
            out.append((f"{fmt}:{label}", path, fmt, options))

    def json_family(fmt: str, doc: Any, name: str, options: dict, per_path: int = 2) -> None:
        text = json.dumps(doc).encode()
        for label, bad in damage(text):
            out.append((f"{fmt}:{label}", _write(root / fmt / label, name, bad), fmt, options))
        for k, (label, bad) in enumerate(mutations(doc, per_path)):
            out.append((f"{fmt}:{label}", _write(root / fmt / f"m{k}", name, bad), fmt, options))

    def lines(path: Path, n: int = 3) -> list[dict]:
        return [json.loads(line) for line in path.read_text().splitlines()[:n]]

    jsonl_family("jevalkit", lines(EXAMPLES / "judged.jsonl"), "r.jsonl", {})
    jsonl_family("grades", lines(EXAMPLES / "grades.jsonl"), "g.jsonl", {})
    jsonl_family("pairwise", lines(EXAMPLES / "pairwise.jsonl"), "p.jsonl", {})
    verdict = {"question_id": "q1", "model": "new", "games": [{"score": "A>B"}, {"score": "B>A"}]}
    jsonl_family(
        "verdicts", [verdict, {**verdict, "question_id": "q2"}], "v.jsonl", {"baseline": "old"}
    )
    preference = {
        "instruction": "do",
        "output_1": "a",
        "generator_1": "base",
        "output_2": "b",
        "generator_2": "new",
        "preference": 1.5,
    }
    json_family("preferences", [preference, {**preference, "instruction": "two"}], "a.json", {})
    sample = {
        "doc_id": 0,
        "doc": {"question": "q"},
        "target": "2",
        "arguments": {"gen_args_0": {"arg_0": "q"}},
        "resps": [["2"]],
        "filtered_resps": ["2"],
        "filter": "strict-match",
        "metrics": ["exact_match"],
        "exact_match": 1.0,
    }
    jsonl_family(
        "lm_eval", [sample, {**sample, "doc_id": 1}], f"samples_t_{DATE}.jsonl", {"model": "m"}
    )
    promptfoo = json.loads((FIXTURES / "promptfoo-0.121.20-echo-repeat3.json").read_text())
    promptfoo["results"]["results"] = promptfoo["results"]["results"][:2]
    json_family("promptfoo", promptfoo, "pf.json", {}, per_path=1)

    seeds = root / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    _inspect_log(seeds / "log.json", "json")
    _inspect_log(seeds / "log.eval", "eval")
    log = json.loads((seeds / "log.json").read_text())
    small = {
        "version": log["version"],
        "status": log["status"],
        "eval": log["eval"],
        "samples": log["samples"],
    }
    json_family("inspect", small, "log.json", {"engine": "builtin"}, per_path=1)
    for engine in ("builtin", "inspect"):
        opts = {"engine": engine}
        header = read_member(seeds / "log.eval", "header.json")
        sample_doc = json.loads(read_member(seeds / "log.eval", "samples/s0_epoch_1.json"))
        out.append((f"inspect-eval:{engine}:valid", seeds / "log.eval", "inspect", opts))
        for k, (label, bad) in enumerate(mutations(sample_doc, 1)):
            dest = root / f"eval-{engine}" / f"m{k}" / "log.eval"
            dest.parent.mkdir(parents=True)
            _rezip(seeds / "log.eval", dest, {"samples/s0_epoch_1.json": bad.encode()})
            out.append((f"inspect-eval:{engine}:sample.{label}", dest, "inspect", opts))
        for k, (label, bad) in enumerate(damage(header)):
            dest = root / f"eval-{engine}" / f"h{k}" / "log.eval"
            dest.parent.mkdir(parents=True)
            _rezip(seeds / "log.eval", dest, {"header.json": bad})
            out.append((f"inspect-eval:{engine}:header.{label}", dest, "inspect", opts))
        unlisted = root / f"eval-{engine}" / "unlisted" / "log.eval"
        unlisted.parent.mkdir(parents=True)
        extra = {
            f"samples/x{i}_epoch_1.json": json.dumps({**sample_doc, "id": f"x{i}"}).encode()
            for i in range(50)
        }
        _rezip(seeds / "log.eval", unlisted, extra)
        out.append((f"inspect-eval:{engine}:unlisted-members", unlisted, "inspect", opts))
        bomb = root / f"eval-{engine}" / "bomb" / "log.eval"
        bomb.parent.mkdir(parents=True)
        _bomb(bomb, header)
        out.append((f"inspect-eval:{engine}:bomb", bomb, "inspect", opts))
        cut = root / f"eval-{engine}" / "cut" / "log.eval"
        cut.parent.mkdir(parents=True)
        data = (seeds / "log.eval").read_bytes()
        cut.write_bytes(data[: len(data) - 30])
        out.append((f"inspect-eval:{engine}:truncated", cut, "inspect", opts))
    shutil.rmtree(root / "unused", ignore_errors=True)
    return out


def read_member(path: Path, name: str) -> bytes:
    """One member of an inspect archive, inflated (zstd included)."""
    from jevalkit.io import read_zip_member

    return read_zip_member(path, name)


def table_corpus(root: Path) -> list[tuple[str, Path]]:
    """Hostile tables for ``io.from_table(path, case="q", system="m", score="s")``: a valid CSV
    and JSONL seed, then each cell of the first row replaced by every hostile value, and whole-file
    damage (a 200,000-character field, 50,002 columns, no header, not UTF-8, ...)."""
    out: list[tuple[str, Path]] = []
    rows = [{"q": "a", "m": "x", "s": 0.5}, {"q": "b", "m": "x", "s": 1.0}]
    jsonl = "".join(json.dumps(r) + "\n" for r in rows)
    csv = "q,m,s\na,x,0.5\nb,x,1.0\n"
    out.append(("table:csv:valid", _write(root / "table" / "valid", "t.csv", csv)))
    out.append(("table:jsonl:valid", _write(root / "table" / "valid", "t.jsonl", jsonl)))
    for k, (label, line) in enumerate(mutations(rows[0], per_path=len(HOSTILE))):
        path = _write(root / "table" / f"m{k}", "t.jsonl", line + "\n" + json.dumps(rows[1]))
        out.append((f"table:jsonl:{label}", path))
    for column in ("q", "m", "s"):
        for k, raw in enumerate(HOSTILE):
            cell = '"' + raw.replace('"', '""') + '"'
            text = csv.replace({"q": "a", "m": "x", "s": "0.5"}[column], cell, 1)
            out.append(
                (
                    f"table:csv:{column}={raw[:12]}",
                    _write(root / "table" / f"c{column}{k}", "t.csv", text),
                )
            )
    wide = ",".join(f"c{i}" for i in range(50_000))
    for label, text in (
        ("huge-field", "q,m,s\n" + "a" * 200_000 + ",x,0.5\n"),
        ("wide", f"q,m,s,{wide}\na,x,0.5{',' * 50_000}\n"),
        ("header-only", "q,m,s\n"),
        ("no-columns", "\n\n"),
        ("ragged", "q,m,s\na,x\nb,x,1.0,9\n"),
    ):
        out.append((f"table:csv:{label}", _write(root / "table" / label, "t.csv", text)))
    for label, bad in damage(csv.encode()):
        out.append((f"table:csv:{label}", _write(root / "table" / f"d-{label}", "t.csv", bad)))
    return out


def null_device(folder: Path, name: str = "null-device") -> Path | None:
    """A null device node of our own in ``folder`` (as root; None where nodes cannot be made): a
    writer that went wrong replaces it, never the system's /dev/null (main's --save-fit did)."""
    node = folder / name
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        return None
    return node
