"""The HTTP client shared by every evaluator: endpoint and key resolution, retries, a response
cache, and a client that turns whatever an endpoint sends into a :class:`Completion`.

Example:
    >>> from jevalkit.client import resolve_endpoint
    >>> resolve_endpoint("http://127.0.0.1:8080/v1").api_key is None
    True
"""

from ..generation import (
    GENERATION,
    GenerationOptions,
    Sampling,
    check_generation,
    request_seed,
    take_generation,
)
from ..providers import PROVIDERS
from ..urls import SECRET_QUERY, redact_url
from ._cache import ResponseCache, cache_key, default_cache_dir
from ._chat import CHAT, COMPLETIONS, DEFAULT_MAX_RESPONSE_BYTES, AttemptMeter, ChatClient, Request
from ._completion import (
    ERROR_TYPES,
    Completion,
    combine,
    error_completion,
    excerpt,
    parse_response,
    token_count,
)
from ._endpoint import (
    DEFAULT_BASE_URL,
    KEY_VARIABLES,
    Endpoint,
    check_file_endpoint,
    is_loopback,
    key_variable_for,
    resolve_endpoint,
    strip_credentials,
)
from ._providers import Route, destination, route_model
from ._retry import RetryPolicy, parse_retry_after

__all__ = [
    "CHAT",
    "COMPLETIONS",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ERROR_TYPES",
    "GENERATION",
    "KEY_VARIABLES",
    "PROVIDERS",
    "SECRET_QUERY",
    "AttemptMeter",
    "ChatClient",
    "Completion",
    "Endpoint",
    "GenerationOptions",
    "Request",
    "ResponseCache",
    "RetryPolicy",
    "Route",
    "Sampling",
    "cache_key",
    "check_file_endpoint",
    "check_generation",
    "combine",
    "default_cache_dir",
    "destination",
    "error_completion",
    "excerpt",
    "is_loopback",
    "key_variable_for",
    "parse_response",
    "parse_retry_after",
    "redact_url",
    "request_seed",
    "resolve_endpoint",
    "route_model",
    "strip_credentials",
    "take_generation",
    "token_count",
]
