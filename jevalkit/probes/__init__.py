"""Probes: versioned, immutable test definitions that test themselves.

Example:
    >>> from jevalkit.probes import load_probe
    >>> load_probe("schema-ten-records@2").rubric[1].text
    'Exactly ten objects'
"""

from ._card import curl_command, probe_card, request_body
from ._cases import Case, cases_from_list, read_case_file, select_cases
from ._check import CHECK_COLUMNS, check_probes, publish_probes
from ._loader import (
    PROBES_ENV,
    list_probes,
    load_probe,
    parse_ref,
    probe_roots,
    read_probe_file,
    validate_probe_data,
)
from ._lock import content_hash, read_lock
from ._model import BASE_VARIANT, Example, ExampleResult, Message, Probe, Variant
from ._new import ANSWER_COLUMNS, SKELETON_SCORERS, NewProbe, new_probe, user_probes_dir
from ._template import fill, placeholders

__all__ = [
    "ANSWER_COLUMNS",
    "BASE_VARIANT",
    "CHECK_COLUMNS",
    "PROBES_ENV",
    "SKELETON_SCORERS",
    "Case",
    "Example",
    "ExampleResult",
    "Message",
    "NewProbe",
    "Probe",
    "Variant",
    "cases_from_list",
    "check_probes",
    "content_hash",
    "curl_command",
    "fill",
    "list_probes",
    "load_probe",
    "new_probe",
    "parse_ref",
    "placeholders",
    "probe_card",
    "probe_roots",
    "publish_probes",
    "read_case_file",
    "read_lock",
    "read_probe_file",
    "request_body",
    "select_cases",
    "user_probes_dir",
    "validate_probe_data",
]
