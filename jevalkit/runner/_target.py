"""Where a run's requests go: an endpoint, the model name to send, and the model file's sha256
when jevalkit serves the model itself."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..client import Endpoint, resolve_endpoint, route_model
from ..errors import UsageError
from ..local import is_local_model, local_endpoint


@dataclass(frozen=True)
class Target:
    """The endpoint, the model name sent in every body, the served model file's sha256, and
    how many requests it serves at once (the embedded model's slots; None: not known)."""

    endpoint: Endpoint
    model: str
    model_sha256: str | None = None
    slots: int | None = None

    @property
    def local(self) -> bool:
        """Whether jevalkit serves this model itself (the embedded model)."""
        return self.model_sha256 is not None


@contextlib.contextmanager
def open_target(
    model: str, base_url: str | None = None, *, api_key_env: str | None = None
) -> Iterator[Target]:
    """Resolve ``model`` to an endpoint and the name to send (its provider prefix names the
    provider: :func:`jevalkit.client.route_model`); ``local`` starts the embedded server when
    it is not running and leaves things as it found them.

    Example:
        >>> with open_target("m", "http://127.0.0.1:9/v1") as target:
        ...     target.endpoint.base_url, target.model
        ('http://127.0.0.1:9/v1', 'm')
    """
    if is_local_model(model) and base_url is None:
        with local_endpoint(model) as server:
            endpoint = Endpoint(server.base_url, server.api_key or None)
            yield Target(endpoint, server.model_name, server.model_sha256, server.slots)
        return
    route = route_model(model, base_url)
    yield Target(resolve_endpoint(route.base_url, api_key_env=api_key_env), route.model)


def endpoint_identity(
    model: str | None,
    base_url: str | None,
    *,
    api_key_env: str | None = None,
    require_key: bool = True,
) -> str | None:
    """What a run's rows must share to be resumed by it, known before anything starts: ``local``
    for the embedded model (whatever port it is on), else the resolved base URL; None for a
    deterministic evaluator that talks to no endpoint. ``require_key=False``: for a dry run,
    which sends nothing.

    Example:
        >>> endpoint_identity("local", None), endpoint_identity("m", "http://127.0.0.1:9/v1/")
        ('local', 'http://127.0.0.1:9/v1')
    """
    if model is None:
        return None
    if not isinstance(model, str) or not model.strip():
        raise UsageError(
            f"model must name the model to ask (e.g. local, or openai/gpt-4o-mini), got {model!r}"
        )
    if is_local_model(model) and base_url is None:
        return "local"
    route = route_model(model, base_url)
    return resolve_endpoint(
        route.base_url, api_key_env=api_key_env, require_key=require_key
    ).base_url


def check_key_variable(api_key_env: str | None) -> None:
    """Refuse ``--api-key-env NAME`` when ``$NAME`` is unset or empty here, in the process that
    sends the requests: they would go out without the key the user named (a loopback endpoint
    needs none, so nothing else would say so).

    Example:
        >>> check_key_variable("JEVALKIT_NO_SUCH_VARIABLE")
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: --api-key-env JEVALKIT_NO_SUCH_VARIABLE: $JEVALKIT_NO_SUCH_VARIABLE is not set (or is empty); export it, or leave --api-key-env out for an endpoint that needs no key
    """
    if api_key_env is not None and not os.environ.get(api_key_env):
        raise UsageError(
            f"--api-key-env {api_key_env}: ${api_key_env} is not set (or is empty); export it, "
            "or leave --api-key-env out for an endpoint that needs no key"
        )


def row_endpoint(row: dict) -> str | None:
    """The endpoint identity of a row already written (see :func:`endpoint_identity`).

    Example:
        >>> row_endpoint({"base_url": "http://127.0.0.1:5/v1", "model_sha256": "ab"})
        'local'
    """
    if row.get("model_sha256"):
        return "local"
    return row.get("base_url")
