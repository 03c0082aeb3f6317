"""A probe's cases: the rows of a dataset its message template is filled from.

A probe file names its cases as a path beside it (``cases: cases.jsonl`` or ``cases.csv``, one
case per line, inside the probe's folder) or lists them inline. Every case has a stable ``id``
(unique in the probe); its other fields fill the ``{{field}}`` placeholders. Three field names
carry scoring inputs instead: ``expected`` (the answer for exact_match / levenshtein /
json_similarity; a JSON value is compared as compact JSON), ``schema`` (a JSON Schema for this
case; in a CSV cell, JSON text) and ``gold`` (recorded in the row, for judges and analyses).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from ..datafiles import read_regular_file
from ..errors import CaseFileError, UsageError
from ..jsontext import json_line, jsonl_lines

__all__ = ["Case", "cases_from_list", "read_case_file", "select_cases"]

SCORING_FIELDS = ("expected", "schema", "gold")
MAX_CASE_FILE_BYTES = 64 * 1024 * 1024
MAX_CASE_FIELDS = 1000  # a case is a row of a dataset, not a table of its own
MAX_CSV_FIELD = csv.field_size_limit()  # 131,072 characters: Python's csv limit


@dataclass(frozen=True)
class Case:
    """One case of a probe: its ``id``, its 1-based ``position`` in the probe, and its fields.

    Example:
        >>> case = Case("q1", 1, MappingProxyType({"question": "2+2?", "expected": "4"}))
        >>> case.expected, case.template_fields()
        ('4', {'id': 'q1', 'question': '2+2?'})
    """

    id: str
    position: int
    fields: Mapping[str, Any]

    @property
    def expected(self) -> Any:
        """The case's ``expected`` answer, or None."""
        return self.fields.get("expected")

    @property
    def gold(self) -> Any:
        """The case's ``gold`` label, or None."""
        return self.fields.get("gold")

    def template_fields(self) -> dict[str, Any]:
        """The fields a template may use: ``id`` and every field but the scoring inputs
        (``expected``, ``schema``, ``gold`` never reach a prompt by accident)."""
        out = {k: v for k, v in self.fields.items() if k not in SCORING_FIELDS}
        return {"id": self.id, **out}


def _case(raw: Any, position: int, where: str, seen: set[str], *, number: bool = False) -> Case:
    if not isinstance(raw, dict):
        raise CaseFileError(f"{where}: a case must be an object with an `id`")
    if number:  # a case file with no ids at all: each case is its position in the file
        raw = {"id": str(position), **raw}
    if "id" not in raw:
        raise CaseFileError(f"{where}: the case has no `id`; give every case a stable, unique id")
    case_id = raw["id"]
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or str(case_id) == "":
        raise CaseFileError(f"{where}: id: must be a non-empty string or integer, got {case_id!r}")
    case_id = str(case_id)
    if len(case_id) > 200:
        raise CaseFileError(f"{where}: id: longer than 200 characters")
    if case_id in seen:
        raise CaseFileError(f"{where}: id: duplicate case id {case_id!r}; ids must be unique")
    seen.add(case_id)
    if len(raw) > MAX_CASE_FIELDS:
        raise CaseFileError(
            f"{where}: the case has {len(raw):,} fields; a case holds at most {MAX_CASE_FIELDS:,}"
        )
    for name in raw:
        if not isinstance(name, str) or not name:
            raise CaseFileError(f"{where}: field names must be non-empty text, got {name!r}")
    if "schema" in raw and not isinstance(raw["schema"], dict | bool):
        raise CaseFileError(
            f"{where}: schema: must be a JSON Schema (an object), got {raw['schema']!r}"
        )
    gold = raw.get("gold")
    if gold is not None and not isinstance(gold, str | int | float | bool):
        raise CaseFileError(f"{where}: gold: must be a single label or number, got {gold!r}")
    fields = {k: v for k, v in raw.items() if k != "id"}
    return Case(case_id, position, MappingProxyType(fields))


def cases_from_list(items: Sequence[Any], where: str) -> tuple[Case, ...]:
    """Cases listed inline in a probe file.

    Example:
        >>> [c.id for c in cases_from_list([{"id": 1, "q": "a"}, {"id": "b", "q": "c"}], "p.yaml")]
        ['1', 'b']
    """
    seen: set[str] = set()
    return tuple(_case(raw, i, f"{where}: cases[{i - 1}]", seen) for i, raw in enumerate(items, 1))


def read_case_file(
    path: Path, *, folder: Path | None = None, number: bool = False, delimiter: str = ","
) -> tuple[tuple[Case, ...], str]:
    """Read a JSONL or CSV case file; return its cases and the sha256 of its bytes.

    Only a regular file is read (a FIFO or a device is refused, never waited on), at most
    64 MB, at most 1,000 fields a case and 131,072 characters a CSV field. With ``folder`` (the
    probe's), a file that resolves outside it (a symbolic link to another place) is refused: a
    probe's cases are the files beside it. With ``number`` (for ``jevalkit probes new``), a
    file with no ``id`` at all (no CSV column, no JSONL case holding one) has its cases
    numbered ``1``, ``2``, ... in file order; a published probe's cases carry their ids.
    ``delimiter`` separates a CSV's cells (``jevalkit probes new`` reads a ``;``-separated
    export with it; a probe's own case file is comma-separated, and a header of one column
    holding ``;`` or a tab is refused, naming the separator).

    Raises:
        CaseFileError: one line naming the file, the line and the field.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "cases.csv"
        >>> _ = p.write_text("id,amount,expected\\na,3,6\\nb,4,8\\n")
        >>> cases, digest = read_case_file(p)
        >>> [(c.id, c.fields["amount"], c.expected) for c in cases], len(digest)
        ([('a', '3', '6'), ('b', '4', '8')], 64)
    """
    if folder is not None:
        _check_inside(path, folder)
    data = _read_bounded(path)
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseFileError(
            f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    seen: set[str] = set()
    cases: list[Case] = []
    if path.suffix == ".jsonl":
        raws = [
            (f"{path}:{lineno}", json_line(line, f"{path}:{lineno}", CaseFileError))
            for lineno, line in enumerate(jsonl_lines(text.removeprefix("\ufeff")), 1)
            if line.strip()
        ]
        numbered = number and not any(isinstance(r, dict) and "id" in r for _, r in raws)
        for where, raw in raws:
            cases.append(_case(raw, len(cases) + 1, where, seen, number=numbered))
    elif path.suffix == ".csv":
        cases = _csv_cases(path, text, seen, number=number, delimiter=delimiter)
    else:
        raise CaseFileError(f"{path}: a case file ends in .jsonl or .csv")
    if not cases:
        raise CaseFileError(f"{path}: no cases (an empty file); write one case per line")
    return tuple(cases), digest


def _check_inside(path: Path, folder: Path) -> None:
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a loop of links
        inside = False
    if not inside:
        raise CaseFileError(
            f"{path}: resolves outside the probe's folder {folder} (a link to another place); "
            "put the case file itself beside the probe file"
        )


def _read_bounded(path: Path) -> bytes:
    """The bytes of a regular file of at most :data:`MAX_CASE_FILE_BYTES`."""

    def refused(message: str) -> CaseFileError:
        if message.endswith("no such case file"):
            message += "; put it beside the probe file"
        return CaseFileError(message)

    return read_regular_file(path, MAX_CASE_FILE_BYTES, refused, what="case file")


def _csv_cases(
    path: Path, text: str, seen: set[str], *, number: bool = False, delimiter: str = ","
) -> list[Case]:
    cases: list[Case] = []
    reader = csv.DictReader(
        io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=delimiter
    )
    try:
        fieldnames = reader.fieldnames
    except csv.Error as exc:
        raise _csv_error(path, 1, exc) from None
    if not fieldnames:
        raise CaseFileError(f"{path}:1: no header; the first line names the columns")
    other = csv_separator(fieldnames)
    if other is not None and other != delimiter:
        raise CaseFileError(
            f"{path}:1: the header is one column {fieldnames[0][:60]!r}: the file is separated "
            f"by {other!r} (as spreadsheets export CSV in some languages); save it as CSV "
            "separated by commas"
        )
    numbered = number and "id" not in fieldnames
    if "id" not in fieldnames and not numbered:
        raise CaseFileError(
            f"{path}:1: the header has no `id` column; add one (a stable, unique id per case)"
        )
    if len(fieldnames) > MAX_CASE_FIELDS:
        raise CaseFileError(
            f"{path}:1: the header has {len(fieldnames):,} columns; a case holds at most "
            f"{MAX_CASE_FIELDS:,} fields"
        )
    counts = Counter(fieldnames)
    repeated = sorted(n for n, k in counts.items() if k > 1)
    if repeated:
        raise CaseFileError(
            f"{path}:1: the header names the column {repeated[0]!r} more than once; "
            "give every column its own name"
        )
    while True:
        try:
            raw = next(reader)
        except StopIteration:
            return cases
        except csv.Error as exc:
            raise _csv_error(path, reader.line_num + 1, exc) from None
        where = f"{path}:{reader.line_num}"
        if None in raw or any(v is None for v in raw.values()):
            raise CaseFileError(f"{where}: the row has a different number of cells than the header")
        if "schema" in raw:
            raw["schema"] = json_line(raw["schema"], f"{where}: schema", CaseFileError)
        cases.append(_case(raw, len(cases) + 1, where, seen, number=numbered))


def csv_separator(header: Sequence[str]) -> str | None:
    """The separator a CSV header read with commas was written with instead (``;`` or a tab),
    when it reads as one column holding it; else None.

    Example:
        >>> csv_separator(["Question;Gold Answer"]), csv_separator(["id", "question"])
        (';', None)
    """
    if len(header) != 1:
        return None
    return next((sep for sep in (";", "\t") if sep in header[0]), None)


def _csv_error(path: Path, line: int, exc: csv.Error) -> CaseFileError:
    if "field larger than field limit" in str(exc):
        return CaseFileError(
            f"{path}:{line}: a field longer than {MAX_CSV_FIELD:,} characters (the CSV limit); "
            "put long texts in a JSONL case file"
        )
    return CaseFileError(f"{path}:{line}: not CSV jevalkit reads ({exc})")


_RANGE = re.compile(r"^\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?$")


def _positions(spec: str, n: int) -> list[int]:
    chosen: dict[int, None] = {}
    for part in spec.split(","):
        match = _RANGE.match(part)
        if match is None:
            raise UsageError(
                f"--cases {spec!r}: {part.strip()!r} is not a position or range; expected "
                "positions like 1-50 or 1-10,20,30-40"
            )
        a = int(match.group(1))
        b = int(match.group(2)) if match.group(2) else a
        if a > b:
            raise UsageError(f"--cases {spec!r}: {a}-{b} runs backwards; write {b}-{a}")
        if not 1 <= a <= b <= n:
            raise UsageError(
                f"--cases {spec!r}: {part.strip()} is outside 1-{n} (the probe has {n} cases)"
            )
        chosen.update(dict.fromkeys(range(a, b + 1)))
    return sorted(chosen)


def select_cases(
    cases: Sequence[Case],
    *,
    cases_spec: str | None = None,
    sample: int | None = None,
    seed: int | None = None,
) -> tuple[tuple[Case, ...], str | None]:
    """A subset of ``cases`` and how it was chosen (None for all of them): positions
    (``"1-50"``, ``"1-10,20"``, 1-based, in file order), then a simple random sample of
    ``sample`` of them drawn with ``seed`` (numpy's generator: the same seed, the same cases).

    Example:
        >>> cs = cases_from_list([{"id": f"c{i}"} for i in range(1, 11)], "p")
        >>> picked, how = select_cases(cs, cases_spec="2-4,9")
        >>> [c.id for c in picked], how
        (['c2', 'c3', 'c4', 'c9'], 'cases 2-4,9 of 10')
        >>> picked, how = select_cases(cs, sample=3, seed=1)
        >>> len(picked), how
        (3, 'random sample of 3 of 10 cases, seed 1')
    """
    n = len(cases)
    chosen = list(cases)
    parts = []
    if cases_spec is not None:
        chosen = [cases[p - 1] for p in _positions(str(cases_spec), n)]
        parts.append(f"cases {cases_spec} of {n}")
    if sample is not None:
        if (
            isinstance(sample, bool)
            or not isinstance(sample, int)
            or not 1 <= sample <= len(chosen)
        ):
            raise UsageError(
                f"--sample must be from 1 to {len(chosen)} (the cases to draw from), got {sample!r}"
            )
        if seed is None:
            raise UsageError(
                "--sample needs a seed (--sample-seed, or --seed) so the draw can be repeated"
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise UsageError(
                f"--sample-seed must be a whole number from 0 up (the draw's seed), got {seed!r}"
            )
        picked = np.random.default_rng(seed).choice(len(chosen), size=sample, replace=False)
        where = f"of {len(chosen)}" if not parts else f"of these {len(chosen)}"
        chosen = [chosen[i] for i in sorted(picked)]
        parts.append(f"random sample of {sample} {where} cases, seed {seed}")
    return tuple(chosen), ("; ".join(parts) or None)
