"""Values made strict JSON: what every results line is written as (no NaN, no infinity, no numpy
scalars), in one compact form."""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (strict JSON has neither).

    Example:
        >>> finite({"a": [1.0, float("inf")], "b": float("nan")})
        {'a': [1.0, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def json_ready(value: Any) -> Any:
    """``value`` made strict-JSON ready: numpy scalars to Python, NaN, infinities and pandas' NA
    to null, tuples and sets to lists, keys to text, and anything else JSON lacks to its text.

    Example:
        >>> import numpy as np
        >>> json_ready({1: np.float64(0.5), "b": (np.int64(2), float("nan")), "c": {3}})
        {'1': 0.5, 'b': [2, None], 'c': [3]}
    """
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_ready(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            value = value.item()
        except (ValueError, TypeError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return str(value)


def json_row(row: dict[str, Any], *, default: Any = None) -> bytes:
    """One results line for ``row`` (no newline): compact JSON, NaN and infinity refused.

    Example:
        >>> json_row({"a": 1, "b": None})
        b'{"a":1,"b":null}'
    """
    return json.dumps(row, separators=(",", ":"), allow_nan=False, default=default).encode()
