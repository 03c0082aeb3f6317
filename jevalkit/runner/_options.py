"""The run options, defined once: every keyword that :func:`jevalkit.run`, :func:`jevalkit.arun`,
:func:`jevalkit.runner.plan`, :func:`jevalkit.runner.judge` and :func:`jevalkit.runner.ajudge`
share, with its type, default and help: how a run sends its requests (what it sends, the
generation parameters, is :class:`jevalkit.client.GenerationOptions`).

:class:`RunSettings` is the definition: a frozen dataclass written out field by field, each
field's type, default and help (an :class:`Option`, via :func:`option`) where an editor and a
type checker see them, validated when made. :data:`RUN_OPTIONS` (the command line's flags:
``--max-retries`` for ``max_retries``, the same help) is read from its fields, and
:class:`RunOptions` (the ``TypedDict`` the entry points take as ``**options:
Unpack[RunOptions]``) lists the same keywords with the same types, which
``tests/runner/test_options.py`` checks.

To add a run option: add its field to :class:`RunSettings` and its line to :class:`RunOptions`,
read it where it acts (``settings.<name>``), check its range in ``__post_init__`` if it has one,
and test it. ``run``, ``judge``, their async forms, ``plan`` and the CLI take it from there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypedDict

from ..client import DEFAULT_MAX_RESPONSE_BYTES, GenerationOptions, RetryPolicy, default_cache_dir
from ..costs import Budget, Price, price_for
from ..errors import UsageError
from ..results import Design
from ._plan import ProbeChoices, check_repeats

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 5
MAX_CONCURRENCY = 1_000


@dataclass(frozen=True)
class Option:
    """What the command line needs to know of a run option.

    Attributes:
        default: the default (the same in Python and on the command line).
        help: one line for ``--help`` and the docs.
        flag: the command-line flag; ``""`` derives it from the name (``--max-retries``), None
            keeps the option Python-only. A boolean that defaults to True gets a ``--no-...``
            flag that turns it off.
        metavar: the placeholder in ``--help``.
        parse: turns the flag's text into the value (``int``, ``float``, ...; default ``str``).
        flag_help: the flag's own line in ``--help`` when ``help`` (the keyword's) would read
            backwards there (a ``--no-...`` flag does the opposite of its keyword).
    """

    default: Any
    help: str
    flag: str | None = ""
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    flag_help: str | None = None

    def cli_flag(self, name: str) -> str | None:
        """The flag of option ``name`` (None: not on the command line).

        Example:
            >>> Option(5, "retries").cli_flag("max_retries"), Option(True, "cache").cli_flag("cache")
            ('--max-retries', '--no-cache')
        """
        if self.flag is None or self.flag:
            return self.flag
        dashed = name.replace("_", "-")
        return f"--no-{dashed}" if self.default is True else f"--{dashed}"


def option(
    default: Any,
    help: str,
    *,
    flag: str | None = "",
    metavar: str | None = None,
    parse: Callable[[str], Any] | None = None,
    flag_help: str | None = None,
) -> Any:
    """A field of :class:`RunSettings` with its default and its :class:`Option` (read by
    :data:`RUN_OPTIONS`).

    Example:
        >>> from dataclasses import dataclass, fields
        >>> @dataclass
        ... class S:
        ...     n: int = option(3, "how many", parse=int)
        >>> S().n, fields(S)[0].metadata["option"].help
        (3, 'how many')
    """
    spec = Option(default, help, flag, metavar, parse, flag_help)
    return field(default=default, metadata={"option": spec})


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How one run sends its requests: a frozen, validated field per run option, for probes and
    judges alike (each keyword of :class:`RunOptions`, with its default and help).

    Example:
        >>> RunSettings().concurrency, RunSettings().timeout, RunSettings().max_retries
        (8, 60.0, 5)
        >>> RunSettings(concurrency=0)
        Traceback (most recent call last):
        ...
        jevalkit.errors.UsageError: concurrency must be a whole number of at least 1, got 0
    """

    base_url: str | None = option(
        None,
        "OpenAI-compatible base URL; the model name is sent as written (default: the "
        "model's provider prefix, else $JEVALKIT_BASE_URL)",
    )
    api_key_env: str | None = option(
        None, "environment variable holding the key for the base URL", metavar="NAME"
    )
    out: str | Path | None = option(
        None, "the results JSONL (default runs/<name>__<model>[__<host>].jsonl)", metavar="PATH"
    )
    label: str | None = option(None, "a name for this configuration (a 'system' in comparisons)")
    repeats: int = option(1, "runs per item", metavar="K", parse=int)
    design: Design | None = option(
        None,
        "what to send next from the answers so far (jevalkit.results.Design: "
        "stats.AdaptiveRepeats, items.ActiveCases, metrics.Race; on the command line "
        "--repeats auto, --cases active:K)",
        flag=None,
    )
    concurrency: int = option(DEFAULT_CONCURRENCY, "requests in flight", metavar="N", parse=int)
    timeout: float = option(
        DEFAULT_TIMEOUT, "seconds one attempt may take in total", metavar="S", parse=float
    )
    max_retries: int = option(
        DEFAULT_MAX_RETRIES,
        "retries of 429, 5xx, timeouts and connection errors",
        metavar="N",
        parse=int,
    )
    max_response_bytes: int = option(
        DEFAULT_MAX_RESPONSE_BYTES, "a larger answer becomes an error row", metavar="B", parse=int
    )
    cache: bool = option(
        True,
        "use the response cache, one entry per request and repeat (False: bypass it)",
        flag_help="bypass the response cache: send every request again and store nothing "
        "(by default an answer cached for the same request and repeat is reused)",
    )
    cache_dir: str | Path | None = option(
        None, "where responses are cached (default: the user cache)", flag=None
    )
    retry_errors: bool = option(False, "re-run only the error rows")
    progress: bool = option(True, "show a progress bar", flag=None)
    budget_usd: float | None = option(
        None,
        "stop cleanly before this invocation spends more than D dollars (every HTTP attempt, retries included, reserves its largest cost; an endpoint billing beyond max_tokens stops the run at once, exit 1)",
        metavar="D",
        parse=float,
    )
    budget_requests: int | None = option(
        None,
        "stop cleanly after N HTTP attempts (retries included) reach the endpoint",
        metavar="N",
        parse=int,
    )
    price_in: float | None = option(
        None, "dollars per million prompt tokens", metavar="P", parse=float
    )
    price_out: float | None = option(
        None, "dollars per million completion tokens", metavar="P", parse=float
    )
    scheduler: str | None = option(
        None, "run on the Dask scheduler at this address, tcp://host:port", metavar="ADDRESS"
    )
    cluster: Any = option(
        None, "run on this Dask Client or cluster object (LocalCluster, ...)", flag=None
    )
    workers: int | None = option(
        None, "run on a LocalCluster of N worker processes on 127.0.0.1", metavar="N", parse=int
    )
    shard: str | None = option(
        None,
        "run only shard I of N (from 0) into <out>.parts/I.jsonl; then `jevalkit merge`",
        metavar="I/N",
    )

    def __post_init__(self) -> None:
        label = self.label
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise UsageError(
                f"label must name the configuration (a 'system' in comparisons), got {label!r}; "
                "give a name such as --label T=0, or leave the option out"
            )
        for name in ("concurrency", "max_response_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a whole number of at least 1, got {value!r}")
        if self.concurrency > MAX_CONCURRENCY:  # each request in flight holds a connection
            raise UsageError(
                f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY:,}, got "
                f"{self.concurrency!r}"
            )
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0:
            raise UsageError(f"timeout must be a positive number of seconds, got {t!r}")
        if isinstance(self.repeats, str) and self.repeats == "auto":  # typed int, given a word
            raise UsageError(
                "repeats='auto' is the command line's way to ask for adaptive repeats; in Python "
                "give design=jevalkit.stats.AdaptiveRepeats(target_half_width=...)"
            )
        check_repeats(self.repeats)
        if self.design is not None and not isinstance(self.design, Design):
            raise UsageError(
                f"design must be a jevalkit.results.Design (stats.AdaptiveRepeats, "
                f"items.ActiveCases, ...), got {type(self.design).__name__}"
            )
        RetryPolicy(max_retries=self.max_retries)  # validates it
        self.new_budget()  # validates the limits
        price_for("", price_in=self.price_in, price_out=self.price_out)  # validates the prices

    def new_budget(self) -> Budget:
        """A fresh budget with this run's limits (one per invocation)."""
        return Budget(usd=self.budget_usd, requests=self.budget_requests)

    def price(self, model: str) -> Price | None:
        """The price of ``model``: the overrides, else the price table, else None."""
        return price_for(model, price_in=self.price_in, price_out=self.price_out)

    def require_price(self, model: str) -> Price:
        """The price of ``model``, which a dollar budget needs; refused when unknown."""
        price = self.price(model)
        if price is None:
            raise UsageError(
                f"--budget-usd needs a price for {model!r}: it is not in data/prices.yaml; "
                "give --price-in and --price-out (dollars per million tokens)"
            )
        return price

    def cache_root(self) -> Path:
        """Where responses are cached."""
        return Path(self.cache_dir) if self.cache_dir else default_cache_dir() / "responses"

    def planned_repeats(self) -> int:
        """The repeats of every case the run plans: the design's when it sets them, else
        ``repeats``.

        Example:
            >>> RunSettings(repeats=3).planned_repeats()
            3
        """
        wanted = getattr(self.design, "planned_repeats", None)
        return self.repeats if wanted is None else int(wanted)

    @classmethod
    def of(cls, options: Mapping[str, Any], *, others: Sequence[str] = ()) -> RunSettings:
        """The settings of keyword arguments; a keyword that is not a run option is refused
        naming the ones there are (and ``others``, the caller's other keywords, taken out of
        ``options`` already).

        Example:
            >>> RunSettings.of({"concurency": 2})
            Traceback (most recent call last):
            ...
            TypeError: unexpected keyword argument 'concurency'; the run options are: base_url, ...
        """
        unknown = sorted(set(options) - set(RUN_OPTIONS))
        if unknown:
            also = f"; and: {', '.join(others)}" if others else ""
            raise TypeError(
                f"unexpected keyword argument {unknown[0]!r}; the run options are: "
                + ", ".join(RUN_OPTIONS)
                + also
            )
        return cls(**options)


RUN_OPTIONS: dict[str, Option] = {f.name: f.metadata["option"] for f in fields(RunSettings)}


class RunOptions(TypedDict, total=False):
    """The options every run takes (probes and judges alike): the fields of
    :class:`RunSettings`, as keywords of ``run``, ``arun``, ``plan``, ``judge`` and ``ajudge``
    and, unless marked Python-only, flags of ``jevalkit run`` / ``judge`` / ``gate``.

    Example:
        >>> RUN_OPTIONS["concurrency"].default, RUN_OPTIONS["concurrency"].cli_flag("concurrency")
        (8, '--concurrency')
    """

    base_url: str | None
    api_key_env: str | None
    out: str | Path | None
    label: str | None
    repeats: int
    design: Design | None
    concurrency: int
    timeout: float
    max_retries: int
    max_response_bytes: int
    cache: bool
    cache_dir: str | Path | None
    retry_errors: bool
    progress: bool
    budget_usd: float | None
    budget_requests: int | None
    price_in: float | None
    price_out: float | None
    scheduler: str | None
    cluster: Any
    workers: int | None
    shard: str | None


class ProbeOptions(RunOptions, GenerationOptions, ProbeChoices, total=False):
    """The keywords of a probe run (``run``, ``arun``, ``plan``): the run options
    (:class:`RunOptions`), the generation parameters
    (:class:`~jevalkit.client.GenerationOptions`) and what to send of each probe
    (:class:`~jevalkit.runner.ProbeChoices`).

    Example:
        >>> {"concurrency", "frequency_penalty", "cases"} <= set(ProbeOptions.__annotations__)
        True
    """
