"""The embedded default model on loopback, so everything runs with no API key.

Example:
    >>> from jevalkit.local import is_local_model
    >>> is_local_model("local")
    True
"""

from ._server import (
    DEFAULT_PORT,
    LOCAL_ALIASES,
    MODEL_NAME,
    LocalServer,
    check_installed,
    is_local_model,
    local_endpoint,
    model_file,
    serve,
    status,
    stop,
)

__all__ = [
    "DEFAULT_PORT",
    "LOCAL_ALIASES",
    "MODEL_NAME",
    "LocalServer",
    "check_installed",
    "is_local_model",
    "local_endpoint",
    "model_file",
    "serve",
    "status",
    "stop",
]
