"""ipywidgets to paste into an analysis; each degrades to static HTML without a widget frontend.

Example:
    >>> from jevalkit.widgets import LevelDistribution
    >>> LevelDistribution([0.25, 0.75], levels=["no", "yes"]).verdict
    'yes'
"""

from ..reports import distribution_html
from ._labeler import Labeler
from ._level_distribution import LevelDistribution
from ._results_browser import CompareView, ResultsBrowser

__all__ = ["CompareView", "Labeler", "LevelDistribution", "ResultsBrowser", "distribution_html"]
