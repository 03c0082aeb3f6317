"""The generation parameters, defined once: the sampling fields of an OpenAI-compatible request
body that a researcher sets (temperature, top_p, max_tokens, seed, stop, penalties, ...).

:class:`GenerationOptions` is the definition (a ``TypedDict``, so ``run(...,
**options: Unpack[...])`` is checked by editors): each parameter's type and a :class:`Sampling`
with its help and its allowed values. Everything else is derived from it: :data:`GENERATION`,
:func:`check_generation` (the check of a probe's parameters, of a run's keywords and of a
judge's sampling parameters), the command line's flags (``--frequency-penalty`` for
``frequency_penalty``, the same help) and what a dry run shows. A parameter set goes into the
request body as it is, so the response cache's key (which covers the whole body) and the row's
``parameters`` and ``params_hash`` cover it too.

To add a parameter: add one line to :class:`GenerationOptions`, and test it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict, get_type_hints

from .errors import UsageError

__all__ = [
    "GENERATION",
    "GenerationOptions",
    "Sampling",
    "check_generation",
    "request_seed",
    "take_generation",
]


@dataclass(frozen=True)
class Sampling:
    """What jevalkit knows of one generation parameter.

    Attributes:
        help: one line for ``--help`` and the docs.
        kind: ``number`` (int or float), ``whole`` (int) or ``texts`` (a string or a list of
            strings; on the command line the flag is given once per string).
        low, high: the allowed range (inclusive; None: unbounded). For ``texts``, ``high`` is the
            most strings.
        metavar: the placeholder in ``--help``.

    Example:
        >>> Sampling("sampling temperature", "number", 0, 2).allows(2.5)
        False
    """

    help: str
    kind: Literal["number", "whole", "texts"]
    low: float | None = None
    high: float | None = None
    metavar: str | None = None

    def allows(self, value: Any) -> bool:
        """Whether ``value`` is one this parameter takes."""
        if self.kind == "texts":
            texts = [value] if isinstance(value, str) else value
            return (
                isinstance(texts, list | tuple)
                and all(isinstance(t, str) and t for t in texts)
                and (self.high is None or len(texts) <= self.high)
            )
        kinds = (int, float) if self.kind == "number" else (int,)
        if isinstance(value, bool) or not isinstance(value, kinds):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def values(self) -> str:
        """The allowed values, in words.

        Example:
            >>> Sampling("top-k", "whole", 0).values(), Sampling("stop", "texts", high=4).values()
            ('a whole number of at least 0', 'a text or a list of up to 4 texts, none empty')
        """
        if self.kind == "texts":
            most = "" if self.high is None else f"up to {_number(self.high)} "
            return f"a text or a list of {most}texts, none empty"
        what = "a whole number" if self.kind == "whole" else "a finite number"
        if self.low is not None and self.high is not None:
            return f"{what} from {_number(self.low)} to {_number(self.high)}"
        if self.low is not None:
            return f"{what} of at least {_number(self.low)}"
        return what

    @property
    def parse(self) -> Callable[[str], Any]:
        """How the command line turns the flag's text into a value."""
        return {"number": float, "whole": int, "texts": str}[self.kind]


def _number(value: float) -> str:
    """``value`` as a reader wants it: ``2``, ``0.5``, ``10,000,000``."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


class GenerationOptions(TypedDict, total=False):
    """The generation parameters of a probe run: each overrides the probe's own and goes into
    the request body as it is (a keyword of ``run``, ``arun`` and ``plan``, a flag of
    ``jevalkit run`` and ``gate``, a key of a probe's ``parameters``).

    Example:
        >>> from jevalkit.client import GENERATION
        >>> GENERATION["frequency_penalty"].values()
        'a finite number from -2 to 2'
    """

    temperature: Annotated[float, Sampling("sampling temperature", "number", 0, 2, "T")]
    top_p: Annotated[
        float, Sampling("nucleus sampling: the top tokens holding P", "number", 0, 1, "P")
    ]
    max_tokens: Annotated[
        int, Sampling("the most tokens an answer may take", "whole", 1, 10**7, "N")
    ]
    seed: Annotated[
        int,
        Sampling(
            "the run's seed: each case's repeat r is sent its own seed derived from it",
            "whole",
            0,
            2**63 - 1,
            "S",
        ),
    ]
    stop: Annotated[
        str | list[str],
        Sampling(
            "a text that ends the answer (give the flag once per text)", "texts", None, 16, "TEXT"
        ),
    ]
    frequency_penalty: Annotated[
        float, Sampling("penalise tokens by how often they appeared", "number", -2, 2, "F")
    ]
    presence_penalty: Annotated[
        float, Sampling("penalise tokens that appeared at all", "number", -2, 2, "F")
    ]
    top_k: Annotated[
        int,
        Sampling(
            "sample from the K likeliest tokens (llama.cpp, vLLM; 0: all)", "whole", 0, None, "K"
        ),
    ]
    min_p: Annotated[
        float,
        Sampling(
            "drop tokens below P x the likeliest's probability (llama.cpp, vLLM)",
            "number",
            0,
            1,
            "P",
        ),
    ]
    repetition_penalty: Annotated[
        float,
        Sampling(
            "divide repeated tokens' odds by R (llama.cpp, vLLM; 1: off)", "number", 0, 10, "R"
        ),
    ]


GENERATION: dict[str, Sampling] = {
    name: hint.__metadata__[0]
    for name, hint in get_type_hints(GenerationOptions, include_extras=True).items()
}


def check_generation(values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The generation parameters among ``values`` that are set (not None), each checked against
    :data:`GENERATION`; other keys are left out (a probe's parameters may hold more, such as
    ``response_format``). ``where`` prefixes the message (a probe's name).

    Raises:
        UsageError: a value the parameter does not take, naming it and the values it does.

    Example:
        >>> check_generation({"temperature": 0, "stop": ["\\n"], "seed": None, "logprobs": True})
        {'temperature': 0, 'stop': ['\\n']}
        >>> check_generation({"temperature": float("nan")})
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: temperature must be a finite number from 0 to 2, got nan
    """
    chosen = {k: v for k, v in values.items() if k in GENERATION and v is not None}
    for name, value in chosen.items():
        if not GENERATION[name].allows(value):
            prefix = f"{where}: " if where else ""
            raise UsageError(f"{prefix}{name} must be {GENERATION[name].values()}, got {value!r}")
    return {k: list(v) if isinstance(v, tuple) else v for k, v in chosen.items()}


def take_generation(options: dict[str, Any]) -> dict[str, Any]:
    """Remove the generation parameters from the keyword arguments ``options``; return those set,
    checked (:func:`check_generation`).

    Example:
        >>> options = {"top_p": 0.9, "concurrency": 2, "seed": None}
        >>> take_generation(options), options
        ({'top_p': 0.9}, {'concurrency': 2})
    """
    return check_generation({name: options.pop(name) for name in GENERATION if name in options})


def request_seed(seed: int, index: int, *key: object) -> int:
    """The seed sent for request ``index`` (a repeat, or a judge's sample) of the item named by
    ``key`` (a case id, its variant, a pairwise position...) in a run seeded with ``seed``.

    Every item gets a seed of its own: ``(seed + h(key)) mod 2**31 + index``, with ``h`` the first
    four bytes of the SHA-256 of the key. Sending every case of repeat r the same ``seed + r``
    would give all of them the same random draws at each sampling step, so their outcomes would
    be correlated (common random numbers) and an interval that counts the cases as independent
    would be too narrow. An item without a key (a probe without cases: its one prompt) is sent
    ``seed + index``, as a person would seed its repeats by hand. The seeds stay below 2**32 for
    any ``index`` up to 2**31, so an endpoint that reads a 32-bit seed (llama.cpp) gets them whole.

    Example:
        >>> request_seed(10, 2)
        12
        >>> request_seed(10, 0, "case-1") != request_seed(10, 0, "case-2")
        True
        >>> request_seed(10, 1, "case-1") - request_seed(10, 0, "case-1")
        1
    """
    if all(k is None for k in key):
        return int(seed) + index
    text = "\x1f".join("" if k is None else str(k) for k in key)
    offset = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    return (int(seed) + offset) % 2**31 + index
