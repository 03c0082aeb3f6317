"""Which endpoint to talk to and with which key, resolved from arguments and the environment.

Base URL: the ``base_url`` argument, else ``$JEVALKIT_BASE_URL``, else OpenRouter's API base.
API key, first one set wins: ``$OPENROUTER_API_KEY``, ``$OPENAI_API_KEY``, ``$JEVALKIT_API_KEY``.
A loopback server (127.0.0.0/8, ::1, localhost) needs no key. The key is read from the environment
only, is never part of ``repr()``, and is redacted from anything an endpoint echoes back.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..errors import ClientError

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
KEY_VARIABLES = ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "JEVALKIT_API_KEY")


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine.

    Example:
        >>> is_loopback("http://127.0.0.1:8080/v1"), is_loopback("https://openrouter.ai/api/v1")
        (True, False)
    """
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible base URL and the key for it (hidden from repr).

    Example:
        >>> Endpoint("http://127.0.0.1:9/v1", "sk-secret")
        Endpoint(base_url='http://127.0.0.1:9/v1')
    """

    base_url: str
    api_key: str | None = field(default=None, repr=False)

    def headers(self) -> dict[str, str]:
        """Request headers; the Authorization header only when a key is set."""
        if self.api_key:
            return {"Authorization": f"Bearer {self.api_key}"}
        return {}

    def redact(self, text: str) -> str:
        """Remove the key from ``text`` (an endpoint may echo a request back in an error).

        Example:
            >>> Endpoint("http://x", "sk-123").redact("bad key sk-123")
            'bad key ***'
        """
        return text.replace(self.api_key, "***") if self.api_key else text


def resolve_endpoint(base_url: str | None = None) -> Endpoint:
    """Resolve the base URL and API key as documented in this module.

    Raises:
        ClientError: a malformed base URL, or a remote endpoint with no key in the environment.

    Example:
        >>> resolve_endpoint("http://127.0.0.1:8080/v1/").base_url
        'http://127.0.0.1:8080/v1'
    """
    url = (base_url or os.environ.get("JEVALKIT_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ClientError(
            f"base URL {url!r} is not an http(s) URL; pass e.g. --base-url http://127.0.0.1:8080/v1"
        )
    key = next((os.environ[v] for v in KEY_VARIABLES if os.environ.get(v)), None)
    if key is None and not is_loopback(url):
        raise ClientError(
            f"no API key for {url}: set one of {', '.join(KEY_VARIABLES)} in the environment"
        )
    return Endpoint(url, key)
