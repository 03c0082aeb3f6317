"""URLs as they may be shown or written: credentials before the host masked, and the values of
credential-like query parameters (``?api-key=``, Azure's style) replaced by ``***``. Plain text
handling, defined once for the client that sends to an endpoint and for the analyses that show or
export the rows it wrote (an export redacts without loading the HTTP stack).

Example:
    >>> from jevalkit.urls import redact_url
    >>> redact_url("https://x.example/v1?key=abc123456")
    'https://x.example/v1?key=***'
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["SECRET_QUERY", "mask_credentials", "redact_url"]

# query parameter names whose values are credentials (Azure's api-key, Google's key, SAS sig,
# access_token, ...): matched case-insensitively anywhere in the name
SECRET_QUERY = re.compile(
    r"key|token|secret|sig|password|passwd|pwd|auth|credential|session|^code$", re.IGNORECASE
)


def redact_url(url: str) -> str:
    """``url`` as it may be shown or written: credentials before the host masked
    (:func:`mask_credentials`) and the values of credential-like query parameters
    (:data:`SECRET_QUERY`) replaced by ``***``; works on URLs too malformed to parse.

    Example:
        >>> redact_url("https://x.azure.com/v1?api-version=2024&api-key=s3cr3t-value&sig=abc%2F")
        'https://x.azure.com/v1?api-version=2024&api-key=***&sig=***'
        >>> redact_url("http://ann:pw@host/v1?token=t0k3n#frag")
        'http://***@host/v1?token=***#frag'
    """
    url = mask_credentials(url)
    head, mark, rest = url.partition("?")
    if not mark:
        return url
    query, hashmark, fragment = rest.partition("#")
    pairs = []
    for pair in query.split("&"):
        name, eq, value = pair.partition("=")
        secret = eq and value and SECRET_QUERY.search(unquote(name))
        pairs.append(f"{name}=***" if secret else pair)
    return head + "?" + "&".join(pairs) + hashmark + fragment


def mask_credentials(url: str) -> str:
    """``url`` with anything between ``scheme://`` and the last ``@`` masked, for messages: it
    works on URLs too malformed to parse, and on a password holding an unencoded ``/``, ``?``,
    ``#`` or ``@`` (an ``@`` in the path masks the host too: safe rather than sorry).

    Example:
        >>> mask_credentials("http://ann:s3cret@exa mple.com:99999/v1")
        'http://***@exa mple.com:99999/v1'
        >>> mask_credentials("http://ann:p/ss#w@rd@host/v1")
        'http://***@host/v1'
    """
    return re.sub(r"^([^:/?#]*://).*@", r"\1***@", url, flags=re.DOTALL)
