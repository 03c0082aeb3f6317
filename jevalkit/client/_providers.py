"""Model names as researchers write them: the provider prefix names the provider.

=====================================  ================================  ======================
model                                  sent to                           key
=====================================  ================================  ======================
``openai/gpt-4o-mini``                 OpenAI's API, as ``gpt-4o-mini``  ``OPENAI_API_KEY``
``openrouter/openai/gpt-4o-mini``      OpenRouter, as ``openai/...``     ``OPENROUTER_API_KEY``
``anthropic/claude-sonnet-4-5``        Anthropic's OpenAI-compatible     ``ANTHROPIC_API_KEY``
                                       endpoint, as ``claude-...``
``local``                              the embedded model (jevalkit.local serves it)
any name with ``--base-url URL``       that URL, the name as written     see the key table
any other name                         ``$JEVALKIT_BASE_URL``, as written (refused when unset)
=====================================  ================================  ======================

An explicit base URL wins over the prefix (a vLLM server serving ``openai/gpt-oss-20b`` is asked
for that name), so the prefix is read only when no ``base_url`` is given. This is how inspect_ai,
lm-eval and litellm read ``openai/``; before, jevalkit sent every name to OpenRouter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import ClientError
from ..providers import PROVIDERS
from ._endpoint import is_loopback, key_variable_for, resolve_endpoint


@dataclass(frozen=True)
class Route:
    """Where a model name goes: ``base_url`` (None: ``$JEVALKIT_BASE_URL``) and the name sent."""

    base_url: str | None
    model: str
    provider: str | None = None


def route_model(model: str, base_url: str | None = None) -> Route:
    """The endpoint and the model name to send for ``model`` as the user wrote it (see the
    table in this module's docstring).

    Raises:
        ClientError: a provider prefix with no model after it, or a name without a provider
            prefix when neither ``base_url`` nor ``$JEVALKIT_BASE_URL`` is given.

    Example:
        >>> route_model("openai/gpt-4o-mini")
        Route(base_url='https://api.openai.com/v1', model='gpt-4o-mini', provider='openai')
        >>> route_model("openrouter/meta-llama/llama-3.1-8b-instruct").model
        'meta-llama/llama-3.1-8b-instruct'
        >>> route_model("openai/gpt-oss-20b", "http://127.0.0.1:8000/v1").model  # as written
        'openai/gpt-oss-20b'
    """
    if base_url:
        return Route(base_url, model)
    provider, _, rest = model.partition("/")
    if provider in PROVIDERS:
        if not rest.strip():
            raise ClientError(
                f"model {model!r}: name the model after the provider, e.g. {provider}/"
                f"{'gpt-4o-mini' if provider != 'anthropic' else 'claude-sonnet-4-5'}"
            )
        return Route(PROVIDERS[provider], rest, provider)
    if os.environ.get("JEVALKIT_BASE_URL", "").strip():
        return Route(None, model)
    raise ClientError(
        f"model {model!r} names no provider: write openai/<model> (OpenAI's API), "
        f"openrouter/{model} (OpenRouter), anthropic/<model>, or local (the embedded model), "
        "or give --base-url URL (or $JEVALKIT_BASE_URL) for another OpenAI-compatible endpoint"
    )


def destination(model: str, base_url: str | None = None, *, api_key_env: str | None = None) -> str:
    """One line saying where requests for ``model`` would go, as which name, with which key
    (whether it is set; its value is never read into the line): for a dry run.

    Example:
        >>> destination("openai/gpt-4o-mini").split(";")[0]
        "https://api.openai.com/v1 as 'gpt-4o-mini'"
        >>> destination("m", "http://127.0.0.1:9/v1")
        "http://127.0.0.1:9/v1 as 'm'; a loopback endpoint needs no key"
    """
    route = route_model(model, base_url)
    endpoint = resolve_endpoint(route.base_url, api_key_env=api_key_env, require_key=False)
    where = f"{endpoint.base_url} as {route.model!r}"
    if is_loopback(endpoint.base_url):
        return f"{where}; a loopback endpoint needs no key"
    variable = api_key_env or key_variable_for(endpoint.base_url)
    state = "set" if os.environ.get(variable) else "not set: the run needs it"
    return f"{where}; key ${variable} ({state})"
