"""The HTTP client shared by the runner and the judges.

Example:
    >>> from jevalkit.client import resolve_endpoint
    >>> resolve_endpoint("http://127.0.0.1:8080/v1").api_key is None or True
    True
"""

from ._cache import ResponseCache, cache_key, default_cache_dir
from ._chat import ChatClient
from ._completion import Completion, error_completion, excerpt, parse_response
from ._endpoint import DEFAULT_BASE_URL, KEY_VARIABLES, Endpoint, is_loopback, resolve_endpoint
from ._retry import RetryPolicy, parse_retry_after

__all__ = [
    "DEFAULT_BASE_URL",
    "KEY_VARIABLES",
    "ChatClient",
    "Completion",
    "Endpoint",
    "ResponseCache",
    "RetryPolicy",
    "cache_key",
    "default_cache_dir",
    "error_completion",
    "excerpt",
    "is_loopback",
    "parse_response",
    "parse_retry_after",
    "resolve_endpoint",
]
