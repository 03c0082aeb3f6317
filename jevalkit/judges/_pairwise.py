"""Pairwise judging: two answers to one case, each comparison played in both orders.

A comparison of ``system_a`` and ``system_b`` on a case is two games, two rows: ``a_first``
(system_a's answer shown as answer A) and ``b_first`` (positions swapped). The judge's verdict is
about positions; each row stores it mapped back to the systems: ``verdict`` is one of
``b>>a``, ``b>a``, ``a=b``, ``a>b``, ``a>>b``, ``probs`` the distribution over those (lowest
first), ``score`` the preference for system_a (0, 0.25, 0.5, 0.75, 1 at the verdicts; the expected
value under the distribution). :func:`jevalkit.metrics.pairwise_preferences` combines the two games
of a case.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ..contract import RowsResult
from ..errors import CaseFileError, JevalkitError
from ..probes import load_probe
from ..results import read_results
from ._judgment import Judgment, expected_level

SYSTEM_VERDICTS = ("b>>a", "b>a", "a=b", "a>b", "a>>b")  # lowest first: the score is system_a's
POSITIONS = ("a_first", "b_first")
STYLE_FEATURES = ("length", "headers", "lists", "bold")
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def style_features(text: str) -> dict[str, int]:
    """What style control adjusts for: characters, Markdown headers, list items, bold spans.

    Example:
        >>> style_features("# Title\\n- one\\n- **two**")
        {'length': 23, 'headers': 1, 'lists': 2, 'bold': 1}
    """
    return {
        "length": len(text),
        "headers": len(_HEADER.findall(text)),
        "lists": len(_LIST.findall(text)),
        "bold": len(_BOLD.findall(text)),
    }


def to_systems(judgment: Judgment, position: str) -> dict[str, Any]:
    """Row fields of a position verdict mapped back to the two systems.

    Example:
        >>> j = Judgment.from_probs(["B>>A", "B>A", "A=B", "A>B", "A>>B"], [0, 0, 0, 0.2, 0.8],
        ...                         coverage=1, method="logprobs")
        >>> to_systems(j, "b_first")["verdict"], round(to_systems(j, "b_first")["score"], 2)
        ('b>>a', 0.05)
    """
    probs = list(judgment.probs) if position == "a_first" else list(judgment.probs)[::-1]
    best = max(range(len(probs)), key=lambda i: (probs[i], -abs(i - 2)))
    score = float(np.dot(probs, [0.0, 0.25, 0.5, 0.75, 1.0]))
    return {
        "probs": probs,
        "expected_level": expected_level(probs),
        "score": score,
        "verdict": SYSTEM_VERDICTS[best],
        "passed": None,
        "coverage": judgment.coverage,
        "method": judgment.method,
        "explanation": judgment.explanation,
        "output": judgment.verdict
        if judgment.method == "logprobs"
        else " | ".join(judgment.raw or ()),
    }


def cases_from_runs(
    run_a: str | pd.DataFrame | RowsResult,
    run_b: str | pd.DataFrame | RowsResult,
    inputs: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Pairwise cases from the outputs of two runs (results paths, frames, or what
    :func:`jevalkit.run` returned), matched by case (probe, version, case id,
    repeat): ``output_a`` from ``run_a``, ``output_b`` from ``run_b``; ``input`` from ``inputs``
    (cases with the same ``id``), else the row's own input (``input`` column, or ``source["input"]``
    of results imported from another tool), else, for probe runs, the probe's last user message.

    Raises:
        CaseFileError: a run holds several systems, the runs share no case, or a case's input is
            nowhere (imported results without one: pass ``inputs``).

    Example:
        >>> run = lambda s, out: pd.DataFrame({"system": s, "probe": "tiny/includes", "version": 0,
        ...     "case_id": ["q/1"], "repeat": 0, "output": [out], "error": None,
        ...     "source": [{"input": "2+2?"}]})
        >>> [(c["input"], c["output_a"], c["output_b"]) for c in cases_from_runs(run("x", "4"), run("y", "5"))]
        [('2+2?', '4', '5')]
    """
    frames = [
        r.rows
        if isinstance(r, RowsResult)
        else (r if isinstance(r, pd.DataFrame) else read_results(r))
        for r in (run_a, run_b)
    ]
    names = []
    for frame, which in zip(frames, ("first", "second"), strict=True):
        systems = sorted(frame["system"].dropna().astype(str).unique())
        if len(systems) != 1:
            raise CaseFileError(
                f"the {which} run holds {len(systems)} systems ({', '.join(systems[:4])}); give one per run"
            )
        names.append(systems[0])
    if names[0] == names[1]:
        names = [f"{names[0]} (1)", f"{names[1]} (2)"]
    by_id = {str(c["id"]): c for c in inputs or []}
    keyed = []
    for frame in frames:
        ok = frame[frame["error"].isna() & frame["output"].notna()]
        key = (
            ok["probe"]
            + "@"
            + ok["version"].astype(str)
            + "/"
            + ok["case_id"].fillna("").astype(str)
            + "#"
            + ok["repeat"].astype(str)
        )
        keyed.append(dict(zip(key, ok.to_dict("records"), strict=True)))
    shared = sorted(set(keyed[0]) & set(keyed[1]))
    if not shared:
        raise CaseFileError("the two runs share no case (same probe, version, case id and repeat)")
    cases = []
    for key in shared:
        a, b = keyed[0][key], keyed[1][key]
        given = by_id.get(str(a.get("case_id")))
        text = given.get("input", "") if given is not None else _row_input(a)
        cases.append(
            {
                "id": key,
                "input": text,
                "output_a": a["output"],
                "output_b": b["output"],
                "system_a": names[0],
                "system_b": names[1],
            }
        )
    return cases


def _row_input(row: dict[str, Any]) -> str:
    """The input a results row was answering: its own (imported results keep it), else its probe's."""
    own = row.get("input")
    if not isinstance(own, str):
        source = row.get("source")
        own = source.get("input") if isinstance(source, dict) else None
    if isinstance(own, str):
        return own
    try:
        probe = load_probe(f"{row['probe']}@{row['version']}")
    except JevalkitError:
        raise CaseFileError(
            f"case {row.get('case_id')!r} of {row['probe']!r}: no input in the results and no such "
            "probe; pass the cases' inputs (a case file with the same ids)"
        ) from None
    return next(m.content for m in reversed(probe.messages) if m.role == "user")
