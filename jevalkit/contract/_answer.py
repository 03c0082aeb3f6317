"""Any statistic's answer as a table: what the contract test and a report compare."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..results import Result


def as_table(answer: Any) -> pd.DataFrame:
    """Any statistic's answer as a table: a DataFrame as it is, a :class:`Result` by its
    ``table()``, a mapping as one row, a number as one row with ``value``.

    Example:
        >>> as_table(0.25).to_dict("records"), as_table({"a": 1}).to_dict("records")
        ([{'value': 0.25}], [{'a': 1}])
    """
    if isinstance(answer, pd.DataFrame):
        return answer
    if isinstance(answer, Result):
        return answer.table()
    if isinstance(answer, dict):
        return pd.DataFrame([answer])
    if isinstance(answer, int | float):
        return pd.DataFrame({"value": [float(answer)]})
    table = getattr(answer, "table", None)
    if callable(table):
        return table()
    raise TypeError(f"cannot show a {type(answer).__name__} as a table")
