"""Message templates: ``{{field}}`` placeholders filled from a case, and nothing else.

The substitution is deliberately minimal: a placeholder is ``{{name}}`` (optional spaces inside
the braces), where ``name`` starts with a letter and holds letters, digits and ``_``. There is no
expression, attribute access, indexing, filter or escape: ``{{a.b}}``, ``{{__class__}}`` and
``{{ {{a}} }}`` are refused when the probe is loaded, never evaluated. Filling is one pass over
the template, so a case value that itself contains ``{{other}}`` is inserted as plain text and
never filled again. Text values go in as they are; other JSON values as compact JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import ProbeError

__all__ = ["fill", "placeholders"]

_OPEN = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*$")


def placeholders(template: str, where: str) -> tuple[str, ...]:
    """The field names a template uses, in order of first use; refuse anything between ``{{``
    and ``}}`` that is not a plain name.

    Example:
        >>> placeholders("Convert {{ amount }} {{unit}} to {{target}}; {{unit}} again", "m")
        ('amount', 'unit', 'target')
        >>> placeholders("{{__class__}}", "messages[0].content")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: messages[0].content: '{{__class__}}' is not a placeholder: write {{name}} with a case field name (a letter, then letters, digits or _); templates have no expressions, attributes or nesting
    """
    names: dict[str, None] = {}
    for match in _OPEN.finditer(template):
        name = _NAME.match(match.group(1))
        if name is None:
            raise ProbeError(
                f"{where}: {match.group(0)[:60]!r} is not a placeholder: write {{{{name}}}} with a "
                "case field name (a letter, then letters, digits or _); templates have no "
                "expressions, attributes or nesting"
            )
        names[name.group(1)] = None
    return tuple(names)


def fill(template: str, fields: Mapping[str, Any], where: str) -> str:
    """``template`` with every ``{{name}}`` replaced by ``fields[name]``, in one pass.

    Raises:
        ProbeError: a placeholder names a field the case does not have (``where`` names the case).

    Example:
        >>> fill("Q: {{question}}", {"question": "What is {{secret}}?"}, "case q1")
        'Q: What is {{secret}}?'
        >>> fill("{{n}} items", {"n": 10}, "case c1")
        '10 items'
        >>> fill("{{missing}}", {}, "case c1")
        Traceback (most recent call last):
        ...
        jevalkit.errors.ProbeError: case c1: no field 'missing' for the placeholder {{missing}}; add it to the case or fix the template
    """

    def value(match: re.Match[str]) -> str:
        name = _NAME.match(match.group(1))
        if name is None:  # refused at load; never evaluated
            raise ProbeError(f"{where}: {match.group(0)[:60]!r} is not a placeholder")
        key = name.group(1)
        if key not in fields:
            raise ProbeError(
                f"{where}: no field {key!r} for the placeholder {{{{{key}}}}}; add it to the "
                "case or fix the template"
            )
        item = fields[key]
        return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)

    return _OPEN.sub(value, template)
