"""What requests cost: the price table, the cost of a row, and budgets that stop a run cleanly.

Example:
    >>> from jevalkit.costs import price_for
    >>> price_for("openai/gpt-4o-mini").input
    0.15
"""

from ..errors import BudgetReached
from ._budget import Budget, BudgetMeter, prompt_token_bound
from ._prices import PRICE_COLUMNS, Price, load_prices, price_for, price_table

__all__ = [
    "PRICE_COLUMNS",
    "Budget",
    "BudgetMeter",
    "BudgetReached",
    "Price",
    "load_prices",
    "price_for",
    "price_table",
    "prompt_token_bound",
]
