"""The providers a model name can name, and the embedded models' names: plain data, defined once
for the client that sends to them and for the analyses that read rows sent to them (an export
names a row's provider without loading the HTTP stack).

Example:
    >>> from jevalkit.providers import PROVIDERS
    >>> PROVIDERS["openai"]
    'https://api.openai.com/v1'
"""

from __future__ import annotations

__all__ = ["EMBEDDED_MODELS", "PROVIDERS"]

PROVIDERS = {
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "anthropic": "https://api.anthropic.com/v1",
}
# the models jevalkit.local serves, by the name the server answers to: their developers
# (jevalkit.local's table of models names the same; tests/local/test_local_models.py holds it)
EMBEDDED_MODELS = {
    "gemma-3-270m-q4_k_m": "google",  # Gemma 3 270M, a base model
    "smollm2-135m-instruct-q4_1": "huggingfacetb",  # SmolLM2 135M Instruct
}
