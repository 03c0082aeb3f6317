"""Checks across a probe's parts that a format schema cannot express: every placeholder of
every variant has a field in every case, every case has the scoring inputs it needs, and every
worked example names a case when the answer depends on it."""

from __future__ import annotations

from pathlib import Path

from ..errors import ProbeError, ScoringError
from ..scorers import compile_schema
from ._model import BASE_VARIANT, Probe
from ._template import placeholders

__all__ = ["check_consistency"]


def check_consistency(probe: Probe, source: Path | str) -> None:
    """Raise :class:`ProbeError` (one line naming the file, and the case or field) when the
    probe's templates, cases, scoring inputs and examples do not fit together.

    Example:
        >>> import jevalkit
        >>> check_consistency(jevalkit.load_probe("unit-conversion"), "v1.yaml")  # fits: None
    """
    used: set[str] = set()
    # format 1 has no templates: its messages are sent as written, braces and all
    for variant in probe.variant_ids if probe.format >= 2 else ():
        for where, text in probe.templates(variant):
            used.update(placeholders(text, f"{source}: {where}"))
    if used and not probe.cases:
        raise ProbeError(
            f"{source}: the {'prompt uses' if probe.prompt else 'messages use'} "
            f"{{{{{sorted(used)[0]}}}}} but the probe has no cases; "
            "add `cases:` or write the text out"
        )
    for case in probe.cases:
        for variant in probe.variant_ids:
            try:
                probe.request_input(case, variant)
            except ProbeError as exc:
                where = "" if variant == BASE_VARIANT else f" (variant {variant})"
                raise ProbeError(f"{source}: {exc}{where}") from None
    _check_scoring(probe, source)
    ids = {c.id for c in probe.cases}
    for ex in probe.examples:
        if ex.case is not None and ex.case not in ids:
            raise ProbeError(
                f"{source}: examples[{ex.label}].case: no case {ex.case!r} in the probe"
            )


def _check_scoring(probe: Probe, source: Path | str) -> None:
    spec = probe.scoring
    kind = spec["type"]
    own = {"json_schema": "schema", "constraints": "constraints"}.get(kind, "expected")
    units = probe.cases or (None,)
    for case in units:
        if own not in spec and (case is None or own not in case.fields):
            what = f"case {case.id!r}" if case is not None else "the probe"
            raise ProbeError(
                f"{source}: {what} has no `{own}` and scoring sets none; give scoring.{own} "
                f"or a `{own}` field in every case"
            )
        if case is None:
            continue
        where = f"{source}: case {case.id!r}"
        try:
            if kind == "json_schema" and "schema" in case.fields:
                compile_schema(case.fields["schema"])
            elif kind == "constraints":
                probe.score("", case)
            elif kind == "json_similarity":
                probe.score("null", case)
        except (ScoringError, ValueError) as exc:
            raise ProbeError(f"{where}: {own}: {exc}") from None
    needs_case = probe.cases and own not in spec
    for ex in probe.examples:
        if needs_case and ex.case is None:
            raise ProbeError(
                f"{source}: examples[{ex.label}]: the {own} is per case: name the case this "
                "example answers (`case: <id>`)"
            )
