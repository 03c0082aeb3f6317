"""The price table (``data/prices.yaml``): US dollars per million input and output tokens."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from .._paths import data_dir
from ..datafiles import load_yaml
from ..errors import UsageError
from ..providers import PROVIDERS

PRICE_COLUMNS = ["model", "input", "output", "source", "as_of"]


@dataclass(frozen=True)
class Price:
    """A model's price per million tokens, and where it came from.

    Example:
        >>> Price(0.15, 0.60, "table").cost(1_000, 500)
        0.00045
    """

    input: float
    output: float
    source: str
    as_of: str | None = None

    def cost(self, prompt_tokens: float | None, completion_tokens: float | None) -> float:
        """US dollars for these token counts (NaN when a count is unknown)."""
        if prompt_tokens is None or completion_tokens is None:
            return math.nan
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


def _check_price(value: object, what: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise UsageError(
            f"{what} must be a price of 0 or more (dollars per million tokens), got {value!r}"
        )
    return float(value)


@lru_cache(maxsize=4)
def _load(path: Path, mtime: float) -> dict[str, Price]:
    def fail(message: str) -> UsageError:
        return UsageError(message)

    doc = load_yaml(path, fail)
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), list):
        raise UsageError(f"{path}: needs a 'models' list of {{ids, input, output, source}}")
    as_of = str(doc.get("as_of")) if doc.get("as_of") is not None else None
    table: dict[str, Price] = {}
    for i, entry in enumerate(doc["models"]):
        where = f"{path}: models[{i}]"
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("ids"), list)
            or not entry["ids"]
        ):
            raise UsageError(
                f"{where}: needs 'ids' (a list of model names), 'input', 'output', 'source'"
            )
        price = Price(
            _check_price(entry.get("input"), f"{where}.input"),
            _check_price(entry.get("output"), f"{where}.output"),
            str(entry.get("source") or path.name),
            as_of,
        )
        for model in entry["ids"]:
            if str(model) in table:
                raise UsageError(f"{where}: model {model!r} is listed twice")
            table[str(model)] = price
    return table


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The price table: model name -> :class:`Price` (default ``data/prices.yaml``).

    Example:
        >>> load_prices()["local"].output
        0.0
    """
    p = Path(path) if path is not None else data_dir() / "prices.yaml"
    if not p.is_file():
        raise UsageError(f"{p}: no price table there")
    return _load(p.resolve(), p.stat().st_mtime)


def price_for(
    model: str,
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    table: str | Path | None = None,
) -> Price | None:
    """The price of ``model``: ``price_in`` / ``price_out`` when given (both), else the table's
    entry, else None (unknown: costs stay NaN, never a guess). A provider prefix
    (:data:`jevalkit.providers.PROVIDERS`) not in the table is looked up without it
    (``openrouter/openai/gpt-4o-mini`` costs what ``openai/gpt-4o-mini`` costs; OpenRouter lists
    the provider's price).

    Example:
        >>> price_for("some/unlisted-model") is None
        True
        >>> price_for("openrouter/openai/gpt-4o-mini") == price_for("openai/gpt-4o-mini")
        True
        >>> price_for("some/unlisted-model", price_in=1, price_out=2).source
        '--price-in/--price-out'
    """
    if (price_in is None) != (price_out is None):
        raise UsageError("give both --price-in and --price-out (dollars per million tokens)")
    if price_in is not None:
        return Price(
            _check_price(price_in, "--price-in"),
            _check_price(price_out, "--price-out"),
            "--price-in/--price-out",
        )
    prices = load_prices(table)
    provider, _, rest = model.partition("/")
    if model not in prices and provider in PROVIDERS:
        return prices.get(rest)
    return prices.get(model)


def price_table(path: str | Path | None = None) -> pd.DataFrame:
    """The price table as a DataFrame: ``model``, ``input``, ``output`` (dollars per million
    tokens), ``source``, ``as_of``.

    Example:
        >>> "openai/gpt-4o-mini" in set(price_table()["model"])
        True
    """
    rows = [
        {"model": m, "input": p.input, "output": p.output, "source": p.source, "as_of": p.as_of}
        for m, p in load_prices(path).items()
    ]
    return pd.DataFrame(rows, columns=PRICE_COLUMNS)
