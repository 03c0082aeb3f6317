"""The providers a model name can name, and the embedded model's name: plain data, defined once
for the client that sends to them and for the analyses that read rows sent to them (an export
names a row's provider without loading the HTTP stack).

Example:
    >>> from jevalkit.providers import PROVIDERS
    >>> PROVIDERS["openai"]
    'https://api.openai.com/v1'
"""

from __future__ import annotations

__all__ = ["EMBEDDED_MODEL", "PROVIDERS"]

PROVIDERS = {
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "anthropic": "https://api.anthropic.com/v1",
}
EMBEDDED_MODEL = "gemma-3-270m-q4_k_m"  # the model file jevalkit.local serves (Gemma 3 270M)
