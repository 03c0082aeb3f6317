"""The results row and its columns, key and dtypes: defined once here, used by every writer and
reader.

One row per key (:data:`KEY_COLUMNS`: probe or evaluator, version, case, variant, model, parameters, label,
the two systems and the position of a pairwise game, repeat). Columns, in order:

=====================  =========================================================================
run_id                 id of the invocation that wrote the row (a resumed run keeps old rows' ids)
kind                   ``probe``, ``judge``, ``pairwise`` (a game between two systems), or
                       ``import`` (a row read from another tool's log)
probe                  probe id (or judge evaluator id)
version                probe / judge version (int)
probe_hash             sha256 of the probe version's content
case_id                case id: a probe's case, or a judge's case file line; null for a probe
                       without cases
model                  model as asked (``--model``)
model_resolved         model as the endpoint answered (``model`` in the response)
system_fingerprint     as the endpoint answered (null when it does not say)
model_sha256           sha256 of the model file, when jevalkit served it (embedded model)
base_url               endpoint base URL (never a key)
parameters             the generation parameters sent (dict: temperature, max_tokens, seed, ...)
params_hash            short hash of ``parameters``; part of the row key
label                  optional name of the configuration (a "system" in comparisons)
repeat                 repeat index, 0..k-1
output                 the model's text (null on error)
finish_reason          ``stop``, ``length``, ...
prompt_tokens          usage as reported
completion_tokens      usage as reported
latency_s              seconds for the final attempt (0 for a cache hit)
attempts               HTTP attempts made (1 = no retry)
cached                 whether the response came from the cache
score                  0..1 score (null on error)
passed                 bool (null on error)
checks                 list of {id, text, passed} rubric checks
first_failing_item     0-based index of the first list item breaking the schema, or null
score_errors           list of the scorer's messages (violations with JSON paths)
error                  null, or {type, message, status} when no usable response came back
gold                   gold level or label (judges)
probs                  distribution over levels (judges)
expected_level         sum of p_i * i (judges)
verdict                most likely level (judges)
coverage               probability mass on valid level tokens before renormalising (judges)
method                 ``logprobs`` or ``sampling`` (judges)
explanation            the judge's explanation of its verdict, when asked for (judges)
started_at             ISO 8601 UTC
finished_at            ISO 8601 UTC
jevalkit_version       version that wrote the row
system_a, system_b     the two systems a pairwise game compares (pairwise rows; part of the key)
position               which was shown first: ``a_first`` or ``b_first`` (pairwise; part of the key)
round                  the wave of a design that sent the row (adaptive repeats' round, an active
                       plan's wave, a cascade's stage); 0 for a run without a design
cost_usd               the request's cost when its model's price is known, else null
source                 the source's own fields, for rows imported from another tool (a dict)
variant                the probe's wording: ``base`` or a declared variant's id when the run
                       asked for variants; null otherwise (part of the key)
subset                 how the run chose its cases when not all of them (``cases 1-50 of 300``,
                       ``random sample of 20 of 300 cases, seed 3``); null for all cases
design                 the design that drew the row (:class:`jevalkit.results.Design`): ``name``
                       (the design, its settings and the hash of what it was built from),
                       ``weighted`` (drawn with a probability that differs between rows: read
                       only through the design's estimate) and what it noted of the draw; null
                       for a run without a design
=====================  =========================================================================
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..jsontext import canonical_json
from ._json import finite


@dataclass
class ResultRow:
    """One results row (see the module docstring for every column).

    Example:
        >>> row = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0)
        >>> row.key()
        ('p', 1, None, None, 'm', '', None, None, None, None, 0)
    """

    run_id: str
    kind: str
    probe: str
    version: int
    model: str
    repeat: int
    probe_hash: str | None = None
    case_id: str | None = None
    model_resolved: str | None = None
    system_fingerprint: str | None = None
    model_sha256: str | None = None
    base_url: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    params_hash: str = ""
    label: str | None = None
    output: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    attempts: int | None = None
    cached: bool | None = None
    score: float | None = None
    passed: bool | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)
    first_failing_item: int | None = None
    score_errors: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    gold: Any = None
    probs: list[float] | None = None
    expected_level: float | None = None
    verdict: Any = None
    coverage: float | None = None
    method: str | None = None
    explanation: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    jevalkit_version: str | None = None
    system_a: str | None = None
    system_b: str | None = None
    position: str | None = None
    round: int | None = None
    cost_usd: float | None = None
    source: dict[str, Any] | None = None
    variant: str | None = None
    subset: str | None = None
    design: dict[str, Any] | None = None

    def key(self) -> tuple:
        """The identity of a row: a results file holds at most one row per key."""
        return row_key(self.__dict__)

    def to_json(self) -> str:
        """One JSONL line (no trailing newline): strict JSON (a NaN or infinity is written as
        null), UTF-8 text; a string holding a lone surrogate is written with ``\\u`` escapes so
        the file stays valid UTF-8 and the text round-trips exactly.

        Example:
            >>> row = ResultRow(run_id="r", kind="probe", probe="p", version=1, model="m", repeat=0,
            ...                 latency_s=float("nan"), output="\\ud800")
            >>> line = row.to_json()
            >>> json.loads(line)["latency_s"] is None, json.loads(line)["output"] == "\\ud800"
            (True, True)
        """
        data = self.__dict__
        try:
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except ValueError:  # a NaN or an infinity somewhere: null (walking every row for one
            data = finite(data)  # that seldom comes cost as much as writing it)
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(data, separators=(",", ":"), allow_nan=False)
        return text


COLUMNS: list[str] = [f.name for f in dataclasses.fields(ResultRow)]
# what names a case: its probe, the probe's version and the case id (the key's first part, and
# every statistic's default ``case=``)
CASE_COLUMNS = ("probe", "version", "case_id")
KEY_COLUMNS = (
    *CASE_COLUMNS,
    "variant",
    "model",
    "params_hash",
    "label",
    "system_a",
    "system_b",
    "position",
    "repeat",
)


def _plain(value: Any) -> Any:
    """Missing values (None, NaN, pandas NA) are one value in a key; numpy scalars are Python."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, str | bytes):
        return _plain(item())
    return value


def row_key(row: dict[str, Any]) -> tuple:
    """The key of a row, as a tuple of :data:`KEY_COLUMNS`; the one definition every writer,
    reader and planner uses. A missing value (None, NaN, pandas NA) is None.

    Example:
        >>> row_key({"probe": "p", "version": 1, "model": "m", "repeat": 2, "params_hash": "ab"})
        ('p', 1, None, None, 'm', 'ab', None, None, None, None, 2)
        >>> row_key({"probe": "p", "version": 1, "model": "m", "repeat": 2, "label": float("nan")})[6] is None
        True
    """
    # text, integers and None, almost every key value, are taken as they are without a call
    return tuple([v if type(v) in _AS_IS else _plain(v) for v in map(row.get, KEY_COLUMNS)])


_AS_IS = frozenset({str, int, bool, type(None)})


def params_hash(parameters: dict[str, Any]) -> str:
    """A short, stable hash of a parameters dict (key order does not matter).

    Example:
        >>> params_hash({"temperature": 0, "max_tokens": 5}) == params_hash({"max_tokens": 5, "temperature": 0})
        True
    """
    # ASCII-escaped, as when results files were first written: the keys of existing rows stay
    canonical = canonical_json(parameters, ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


# Stable dtypes: nullable integers and booleans, so a missing value (an error row) stays NA
# instead of turning a whole column into floats or objects.
DTYPES = {
    "version": "Int64",
    "repeat": "Int64",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "attempts": "Int64",
    "first_failing_item": "Int64",
    "latency_s": "Float64",
    "score": "Float64",
    "expected_level": "Float64",
    "coverage": "Float64",
    "passed": "boolean",
    "cached": "boolean",
    "round": "Int64",
    "cost_usd": "Float64",
}


def key_order(key: tuple) -> tuple:
    """A sort key for row keys holding None and mixed types (None first, then by type name).

    Example:
        >>> sorted([("p", 2), ("p", None), ("p", 1)], key=key_order)
        [('p', None), ('p', 1), ('p', 2)]
    """
    return tuple((v is not None, type(v).__name__, v if v is not None else 0) for v in key)


def key_text(key: tuple) -> str:
    """A row key as compact JSON: what :func:`key_hash` hashes and a run's plan digests.

    Example:
        >>> key_text(("p", 1, None, "m", "ab", None, None, None, None, 3))
        '["p",1,null,"m","ab",null,null,null,null,3]'
    """
    return json.dumps(list(key), sort_keys=True, separators=(",", ":"), default=str)


def key_hash(key: tuple) -> int:
    """A stable 64-bit hash of a row key (sha256 of its JSON): the same in every process.

    Example:
        >>> key_hash(("p", 1, None, "m", "ab", None, None, None, None, 3)) == key_hash(
        ...     ("p", 1, None, "m", "ab", None, None, None, None, 3))
        True
    """
    return int.from_bytes(hashlib.sha256(key_text(key).encode()).digest()[:8], "big")


def shard_of(key: tuple, n_shards: int) -> int:
    """The shard (0 to ``n_shards - 1``) a row key belongs to: the same in every process (a
    Slurm array task, a Kubernetes indexed job), so a merge knows each shard's jobs too.

    Example:
        >>> key = ("p", 1, None, "m", "ab", None, None, None, None, 3)
        >>> shard_of(key, 4) == shard_of(key, 4), 0 <= shard_of(key, 4) < 4
        (True, True)
    """
    return key_hash(key) % n_shards
