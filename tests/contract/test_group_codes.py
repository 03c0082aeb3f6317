"""group_codes codes key columns by pandas.factorize where their types sort by one rule: the
same codes and table as the groupby(sort=True, dropna=False) it replaced there, which still codes
object and categorical columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from jevalkit.contract import group_codes


def by_groupby(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    grouped = frame[columns].groupby(columns, sort=True, dropna=False)
    table = grouped.size().reset_index()[columns].reset_index(drop=True)
    return grouped.ngroup().to_numpy().astype(np.int64), table


COLUMNS = {
    "int": st.integers(-3, 3),
    "float": st.sampled_from([0.0, -0.0, 1.5, -2.0, np.nan, np.inf]),
    "text": st.sampled_from(["a", "B", "b", "é", "", None]),
    "bool": st.booleans(),
    "time": st.sampled_from([pd.Timestamp("2026-01-01"), pd.Timestamp("2025-06-30"), pd.NaT]),
}


@st.composite
def frames(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(COLUMNS)), min_size=1, max_size=3))
    n = draw(st.integers(0, 30))
    data = {
        f"{kind}{i}": draw(st.lists(COLUMNS[kind], min_size=n, max_size=n))
        for i, kind in enumerate(kinds)
    }
    frame = pd.DataFrame(data)
    for name in frame.columns:
        if name.startswith("text"):
            frame[name] = frame[name].astype("str")
        elif name.startswith("time"):
            frame[name] = pd.to_datetime(frame[name])
    return frame


@settings(max_examples=400, deadline=None)
@given(frames())
def test_the_same_codes_and_table_as_groupby(frame):
    columns = list(frame.columns)
    codes, table = group_codes(frame, columns)
    want_codes, want_table = by_groupby(frame, columns)
    assert codes.dtype == np.int64 and codes.tolist() == want_codes.tolist()
    if len(frame):
        pd.testing.assert_frame_equal(table, want_table)


def test_object_and_categorical_columns_keep_groupbys_order():
    frame = pd.DataFrame(
        {
            "case": pd.Series([2, "10", 1, "x", 2], dtype=object),
            "level": pd.Categorical(["hi", "lo", "hi", "lo", "lo"], categories=["lo", "hi"]),
        }
    )
    for columns in (["case"], ["level"], ["level", "case"]):
        codes, table = group_codes(frame, columns)
        want_codes, want_table = by_groupby(frame, columns)
        assert codes.tolist() == want_codes.tolist()
        pd.testing.assert_frame_equal(table, want_table)
