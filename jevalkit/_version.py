"""The installed jevalkit version (written into every results row and report)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("jevalkit")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0+unknown"
