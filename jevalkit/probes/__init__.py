"""Probes: versioned, immutable test definitions that test themselves.

Example:
    >>> from jevalkit.probes import load_probe
    >>> load_probe("schema-ten-records@2").rubric[1].text
    'Exactly ten objects'
"""

from ._card import curl_command, probe_card, request_body
from ._check import CHECK_COLUMNS, check_probes, publish_probes
from ._loader import list_probes, load_probe, parse_ref, read_probe_file, validate_probe_data
from ._lock import content_hash, read_lock
from ._model import Example, ExampleResult, Message, Probe

__all__ = [
    "CHECK_COLUMNS",
    "Example",
    "ExampleResult",
    "Message",
    "Probe",
    "check_probes",
    "content_hash",
    "curl_command",
    "list_probes",
    "load_probe",
    "parse_ref",
    "probe_card",
    "publish_probes",
    "read_lock",
    "read_probe_file",
    "request_body",
    "validate_probe_data",
]
