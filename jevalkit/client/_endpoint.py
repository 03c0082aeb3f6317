"""Which endpoint to talk to and with which key, resolved from arguments and the environment.

Base URL: the ``base_url`` argument, else ``$JEVALKIT_BASE_URL``, else OpenRouter's API base
(a run picks it from the model's provider prefix first: :func:`route_model`).

Each key goes only to the endpoint it belongs to:

=======================  ==================================================================
``OPENROUTER_API_KEY``   sent only to ``openrouter.ai``
``OPENAI_API_KEY``       sent only to ``api.openai.com``
``ANTHROPIC_API_KEY``    sent only to ``api.anthropic.com``
``JEVALKIT_API_KEY``     sent to any other base URL (a self-hosted or third-party endpoint)
``api_key_env="NAME"``   (``--api-key-env NAME``) read the key for this endpoint from ``$NAME``
=======================  ==================================================================

A loopback server (127.0.0.0/8, ::1, localhost) needs no key; a remote one without its key is an
error naming the variable to set. Credentials written into a URL (``https://user:pass@host``) are
taken out of it (sent as HTTP basic auth, never written anywhere, masked in messages); with a
key for the endpoint also set, the ambiguity is refused. A URL's query (``?api-version=...``,
Azure's ``?api-key=...``, ``?key=``, ``?token=``, a SAS ``?sig=``) is taken out of the base URL
too and sent with every request; the values of credential-like names (:data:`SECRET_QUERY`) are
secrets like a key: never in a row, a log or an export (:func:`redact_url`), and redacted from
what an endpoint sends back.

An endpoint that comes only from a file (a cascade file's per-judge ``base_url``, a results row,
a prior) never receives a key the user did not send there: :func:`check_file_endpoint` is the one
rule (a key goes to an endpoint the user named, on the command line, in the environment or in
the Python call, or to the provider its variable belongs to; any other needs the user's
confirmation: ``--base-url``, or ``--trust-file-endpoints``). Keys are read from the
environment only, never appear in ``repr()``, and are redacted from everything an endpoint sends
back, in the raw body and after JSON decoding, in every form jevalkit sends them (the key, the
password, ``user:password`` and its base64), and so is any echoed run of 8 or more of a secret's
leading characters (an echo that cut the end off). A key shorter than 8 characters cannot be redacted
without corrupting ordinary text: it is refused for a remote endpoint and not redacted on loopback.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ..errors import ClientError
from ..urls import SECRET_QUERY, redact_url

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
KEY_VARIABLES = ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "JEVALKIT_API_KEY")
# host suffix -> the variable whose key that host may receive
KEY_OWNERS = {
    "openrouter.ai": "OPENROUTER_API_KEY",
    "api.openai.com": "OPENAI_API_KEY",
    "api.anthropic.com": "ANTHROPIC_API_KEY",
}
CUSTOM_KEY_VARIABLE = "JEVALKIT_API_KEY"
MIN_REDACTABLE = 8
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine.

    Example:
        >>> is_loopback("http://127.0.0.1:8080/v1"), is_loopback("https://openrouter.ai/api/v1")
        (True, False)
    """
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_variable_for(url: str) -> str:
    """The environment variable whose key may be sent to ``url``.

    Example:
        >>> key_variable_for("https://openrouter.ai/api/v1"), key_variable_for("http://10.0.0.5:8000/v1")
        ('OPENROUTER_API_KEY', 'JEVALKIT_API_KEY')
    """
    host = (urlsplit(url).hostname or "").lower()
    for suffix, variable in KEY_OWNERS.items():
        if host == suffix or host.endswith("." + suffix):
            return variable
    return CUSTOM_KEY_VARIABLE


def split_query(url: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``url`` without its query, and the query's parameters (sent with every request).

    Example:
        >>> split_query("https://x.azure.com/openai/v1?api-version=2024-10&api-key=s3cr3t")
        ('https://x.azure.com/openai/v1', (('api-version', '2024-10'), ('api-key', 's3cr3t')))
    """
    parts = urlsplit(url)
    if not parts.query:
        return url, ()
    params = tuple(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", "")), params


def strip_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """Split ``https://user:pass@host/...`` into the URL without credentials and (user, pass).

    Example:
        >>> strip_credentials("https://ann:s3cret-pass@example.com/v1")
        ('https://example.com/v1', ('ann', 's3cret-pass'))
        >>> strip_credentials("http://127.0.0.1:9/v1")
        ('http://127.0.0.1:9/v1', None)
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))


@functools.lru_cache(maxsize=64)
def _escaped_pattern(secret: str) -> re.Pattern[str]:
    """A regex matching a run of at least :data:`MIN_REDACTABLE` leading characters of ``secret``
    with any of them written as a JSON ``\\uXXXX`` escape (or ``\\/`` for ``/``), as an
    endpoint may echo it JSON-encoded."""
    parts = []
    for ch in secret:
        options = [re.escape(ch), f"\\\\u{ord(ch):04x}", f"\\\\u{ord(ch):04X}"]
        if ch == "/":
            options.append(r"\\/")
        parts.append("(?:" + "|".join(options) + ")")
    tail = ""
    for part in reversed(parts[MIN_REDACTABLE:]):
        tail = f"(?:{part}{tail})?"
    return re.compile("".join(parts[:MIN_REDACTABLE]) + tail)


def _redact_runs(text: str, secret: str) -> str:
    """``text`` with every run of at least :data:`MIN_REDACTABLE` leading characters of
    ``secret`` (the whole secret, or what is left of it when an echo cut its end) replaced."""
    head = secret[:MIN_REDACTABLE]
    if head not in text:
        return text
    out, i = [], 0
    while (j := text.find(head, i)) != -1:
        k = MIN_REDACTABLE
        while k < len(secret) and j + k < len(text) and text[j + k] == secret[k]:
            k += 1
        out += [text[i:j], "***"]
        i = j + k
    return "".join([*out, text[i:]])


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible base URL and the secrets for it (hidden from repr).

    Example:
        >>> Endpoint("http://127.0.0.1:9/v1", "sk-secret-123")
        Endpoint(base_url='http://127.0.0.1:9/v1')
    """

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    auth: tuple[str, str] | None = field(default=None, repr=False)
    params: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @property
    def identity(self) -> str:
        """The base URL with the query parameters that are not credentials (``api-version``):
        what tells two endpoints apart, with nothing secret in it (a cache key is taken over it).

        Example:
            >>> Endpoint("https://x/v1", params=(("api-version", "1"), ("api-key", "s"))).identity
            'https://x/v1?api-version=1'
        """
        public = [(k, v) for k, v in self.params if not SECRET_QUERY.search(k)]
        return self.base_url + ("?" + urlencode(public) if public else "")

    def headers(self) -> dict[str, str]:
        """Request headers; the Authorization header only when a key is set."""
        if self.api_key:
            return {"Authorization": f"Bearer {self.api_key}"}
        return {}

    def secrets(self) -> list[str]:
        """The secrets long enough to redact safely, in every form jevalkit puts on the wire: the
        key (sent as ``Bearer KEY``), and the URL's password, ``user:password`` and its base64
        (sent as ``Basic BASE64``; redacted even when the password alone is short).

        Example:
            >>> Endpoint("http://x", auth=("ann", "pw")).secrets()
            ['YW5uOnB3']
        """
        found = [self.api_key or ""]
        found += [value for name, value in self.params if SECRET_QUERY.search(name)]
        if self.auth is not None:
            user, password = self.auth
            pair = f"{user}:{password}"
            found += [password, pair, base64.b64encode(pair.encode()).decode()]
        return [s for s in found if len(s) >= MIN_REDACTABLE]

    def redact(self, text: str) -> str:
        """Remove every secret from ``text``, as written or JSON-escaped.

        Example:
            >>> ep = Endpoint("http://x", "sk-123456789")
            >>> ep.redact("bad key sk-123456789 / sk\\\\u002d123456789")
            'bad key *** / ***'
            >>> ep.redact("an echo cut short: sk-1234567")  # 8+ leading characters of the key
            'an echo cut short: ***'
            >>> Endpoint("http://x", "1").redact("version 1.0")  # too short to redact safely
            'version 1.0'
        """
        for secret in sorted(self.secrets(), key=len, reverse=True):
            text = _redact_runs(text, secret)
            if "\\" in text:
                text = _escaped_pattern(secret).sub("***", text)
        return text

    def redact_value(self, value: Any) -> Any:
        """Redact every string inside a decoded JSON value (keys included).

        Example:
            >>> Endpoint("http://x", "sk-123456789").redact_value({"a": ["sk-123456789!"]})
            {'a': ['***!']}
        """
        if not self.secrets():
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(k): self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_value(v) for v in value]
        return value


def _shown_url(url: str) -> str:
    """``url`` for a message: credentials and secret query values masked (:func:`redact_url`)."""
    return redact_url(url)


def _check_url(url: str) -> None:
    shown = _shown_url(url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
        host = parts.hostname
    except ValueError as exc:
        # urllib quotes pieces of the URL (a 'port' cut from a password holding a '/'): with
        # credentials in it, say only what to fix.
        reason = (
            "credentials in it must percent-encode / ? # @ and :"
            if "@" in url.partition("://")[2]
            else exc
        )
        raise ClientError(
            f"base URL {shown!r} cannot be parsed ({reason}); pass e.g. --base-url "
            "http://127.0.0.1:8080/v1"
        ) from None
    if parts.scheme not in ("http", "https") or not host:
        raise ClientError(
            f"base URL {shown!r} is not an http(s) URL; pass e.g. --base-url http://127.0.0.1:8080/v1"
        )


def resolve_endpoint(
    base_url: str | None = None, *, api_key_env: str | None = None, require_key: bool = True
) -> Endpoint:
    """Resolve the base URL and the key that belongs to it, as documented in this module.
    ``require_key=False`` (a dry run, which sends nothing) resolves a remote endpoint without
    its key.

    Raises:
        ClientError: a malformed base URL, a remote endpoint with no key for it in the
            environment, or a key too short to redact safely on a remote endpoint.

    Example:
        >>> resolve_endpoint("http://127.0.0.1:8080/v1/").base_url
        'http://127.0.0.1:8080/v1'
    """
    raw = (base_url or os.environ.get("JEVALKIT_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
    _check_url(raw)
    url, auth = strip_credentials(raw)
    url, params = split_query(url)
    for name, value in params:
        if SECRET_QUERY.search(name) and 0 < len(value) < MIN_REDACTABLE and not is_loopback(url):
            raise ClientError(
                f"the query parameter {name!r} of the base URL is {len(value)} character(s) "
                "long: too short to be a real credential or to be redacted safely; check it"
            )
    if api_key_env is not None and not _ENV_NAME.match(api_key_env):
        raise ClientError(f"--api-key-env {api_key_env!r} is not an environment variable name")
    variable = api_key_env or key_variable_for(url)
    key = os.environ.get(variable) or None
    if key is not None and (key != key.strip() or any(c in key for c in "\r\n")):
        raise ClientError(f"${variable} has surrounding whitespace or a line break; fix its value")
    if key is not None and auth is not None:
        raise ClientError(
            f"the base URL carries credentials and ${variable} is set: jevalkit will not choose "
            f"which one to send; take the credentials out of the URL or unset ${variable}"
        )
    local = is_loopback(url)
    if key is None and auth is None and not local and require_key:
        raise ClientError(f"no API key for {url}: set ${variable} in the environment")
    if not local:
        for name, secret in ((f"${variable}", key), ("the password in the URL", auth and auth[1])):
            if secret and len(secret) < MIN_REDACTABLE:
                raise ClientError(
                    f"{name} is {len(secret)} character(s) long: too short to be a real key for "
                    f"{url} or to be redacted safely; check its value"
                )
    return Endpoint(url, key, auth, params)


def check_file_endpoint(
    url: str, source: str, *, api_key_env: str | None = None, trusted: bool = False
) -> str:
    """The one rule for an endpoint that comes only from a file (a cascade file's per-judge
    ``base_url``, a results row, a prior): say where requests would go, and refuse when a key
    from the environment would be sent there without the user having named that endpoint.

    A key may go to the endpoint when no key would be sent at all (its variable is unset), when
    the key is a provider's and the endpoint is that provider's (``$OPENAI_API_KEY`` to
    ``api.openai.com``), when the user named this very endpoint in ``$JEVALKIT_BASE_URL``, or
    when ``trusted`` (the user confirmed the file's endpoints: ``--trust-file-endpoints``).
    Anything else would forward the user's key to whoever wrote the file. A caller that lets the
    user name the endpoint instead (``--base-url``, which replaces the file's) does not ask.

    Returns:
        One line to print: the endpoint (credentials masked), where it came from, and which key
        goes with the requests.

    Raises:
        ClientError: a key would go to an endpoint named only in ``source``; the line names the
            endpoint, the variable and both ways to confirm it.

    Example:
        >>> import os
        >>> os.environ["JEVALKIT_API_KEY"] = "sk-example-0123456789"
        >>> check_file_endpoint("https://elsewhere.example/v1", "cascade.json (judge small)")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ClientError: cascade.json (judge small) names the endpoint https://elsewhere.example/v1, and $JEVALKIT_API_KEY would be sent to it: a key goes only to an endpoint you name; give --base-url URL (every judge is sent there) or --trust-file-endpoints (send $JEVALKIT_API_KEY to the endpoints the file names)
        >>> check_file_endpoint("https://elsewhere.example/v1", "cascade.json", trusted=True)
        'https://elsewhere.example/v1 (from cascade.json; $JEVALKIT_API_KEY sent: --trust-file-endpoints)'
        >>> del os.environ["JEVALKIT_API_KEY"]
        >>> check_file_endpoint("http://127.0.0.1:8080/v1", "cascade.json")
        'http://127.0.0.1:8080/v1 (from cascade.json; no key sent: $JEVALKIT_API_KEY is not set)'
    """
    raw = url.strip().rstrip("/")
    _check_url(raw)
    shown = _shown_url(raw)
    if api_key_env is not None and not _ENV_NAME.match(api_key_env):
        raise ClientError(f"--api-key-env {api_key_env!r} is not an environment variable name")
    bare, _ = split_query(strip_credentials(raw)[0])
    variable = api_key_env or key_variable_for(bare)
    if not os.environ.get(variable):
        return f"{shown} (from {source}; no key sent: ${variable} is not set)"
    if api_key_env is None and variable != CUSTOM_KEY_VARIABLE:
        return f"{shown} (from {source}; ${variable} sent: the endpoint is its provider's)"
    named = os.environ.get("JEVALKIT_BASE_URL", "").strip().rstrip("/")
    if named and named == raw:
        return f"{shown} (from {source}; ${variable} sent: named in $JEVALKIT_BASE_URL)"
    if trusted:
        return f"{shown} (from {source}; ${variable} sent: --trust-file-endpoints)"
    raise ClientError(
        f"{source} names the endpoint {shown}, and ${variable} would be sent to it: a key goes "
        "only to an endpoint you name; give --base-url URL (every judge is sent there) or "
        f"--trust-file-endpoints (send ${variable} to the endpoints the file names)"
    )
