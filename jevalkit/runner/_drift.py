"""Model drift: rows of one model answered by different resolved models or fingerprints."""

from __future__ import annotations

import warnings

import pandas as pd


def model_drift(results: pd.DataFrame) -> pd.DataFrame:
    """Rows whose ``model_resolved`` or ``system_fingerprint`` differs from the most common value
    for the same ``model`` (a provider-side update changes behaviour between days).

    Returns the differing rows with columns ``model``, ``field``, ``expected``, ``found``,
    ``row`` (index in ``results``), ``probe``, ``repeat``, ``finished_at``; empty when consistent.

    Example:
        >>> df = pd.DataFrame({"model": ["m"] * 3, "model_resolved": ["m-1", "m-1", "m-2"],
        ...                    "system_fingerprint": [None] * 3, "probe": ["p"] * 3,
        ...                    "repeat": [0, 1, 2], "finished_at": ["t"] * 3})
        >>> model_drift(df)[["field", "expected", "found", "row"]].values.tolist()
        [['model_resolved', 'm-1', 'm-2', 2]]
    """
    out = []
    for model, group in results.groupby("model", sort=True):
        for field in ("model_resolved", "system_fingerprint"):
            values = group[field].dropna()
            if values.nunique() < 2:
                continue
            usual = values.mode().iloc[0]
            for idx, value in values[values != usual].items():
                row = results.loc[idx]
                out.append(
                    {
                        "model": model,
                        "field": field,
                        "expected": usual,
                        "found": value,
                        "row": idx,
                        "probe": row.get("probe"),
                        "repeat": row.get("repeat"),
                        "finished_at": row.get("finished_at"),
                    }
                )
    columns = ["model", "field", "expected", "found", "row", "probe", "repeat", "finished_at"]
    return pd.DataFrame(out, columns=columns)


def describe_drift(drift: pd.DataFrame) -> str:
    """One line per drifting (model, field) naming the rows, for a warning.

    Example:
        >>> describe_drift(pd.DataFrame(columns=["model", "field", "expected", "found", "row"]))
        ''
    """
    lines = []
    for (model, field), group in drift.groupby(["model", "field"], sort=True):
        rows = ", ".join(str(r) for r in group["row"].tolist()[:10])
        more = "" if len(group) <= 10 else f" and {len(group) - 10} more"
        found = ", ".join(sorted({str(v) for v in group["found"]}))
        lines.append(
            f"model drift: {model} answered as {group['expected'].iloc[0]!r} but {field} was "
            f"{found} in rows {rows}{more}"
        )
    return "\n".join(lines)


def warn_of_drift(results: pd.DataFrame) -> None:
    """Warn (one :class:`UserWarning`, attributed to the caller's caller) when ``results``
    drift; see :func:`model_drift`.

    Example:
        >>> warn_of_drift(pd.DataFrame(columns=["model", "model_resolved"]))  # no rows: quiet
    """
    drift = describe_drift(model_drift(results))
    if drift:
        warnings.warn(drift, stacklevel=3)
