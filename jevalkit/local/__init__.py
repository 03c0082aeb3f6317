"""The embedded models on loopback (llama.cpp's ``llama-server``): Gemma 3 270M, a base model
(``--model local``, the default), and SmolLM2 135M Instruct, a chat model (``--model
local-chat``), so everything runs with no API key.

Example:
    >>> from jevalkit.local import is_local_model, local_model
    >>> is_local_model("local"), local_model("local-chat").kind
    (True, 'chat')
"""

from ._build import PORTABLE_FLAGS, build_server, download_sources, installed_server_path
from ._capacity import busy_cpus, capacity
from ._models import MODELS as LOCAL_MODELS
from ._models import LocalModel, is_local_model, local_model
from ._server import (
    DEFAULT_PORT,
    DEFAULT_SLOTS,
    DEFAULT_THREADS,
    KEY_VARIABLE,
    LOCAL_ALIASES,
    MODEL_NAME,
    LocalServer,
    check_installed,
    free_port,
    how_to_connect,
    is_our_server,
    live_leases,
    local_endpoint,
    model_file,
    port_is_free,
    process_start_time,
    read_state,
    running_pid,
    serve,
    server_binary,
    serving,
    state_file,
    status,
    stop,
    unauthorized_hint,
)

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_SLOTS",
    "DEFAULT_THREADS",
    "KEY_VARIABLE",
    "LOCAL_ALIASES",
    "LOCAL_MODELS",
    "MODEL_NAME",
    "PORTABLE_FLAGS",
    "LocalModel",
    "LocalServer",
    "build_server",
    "busy_cpus",
    "capacity",
    "check_installed",
    "download_sources",
    "free_port",
    "how_to_connect",
    "installed_server_path",
    "is_local_model",
    "is_our_server",
    "live_leases",
    "local_endpoint",
    "local_model",
    "model_file",
    "port_is_free",
    "process_start_time",
    "read_state",
    "running_pid",
    "serve",
    "server_binary",
    "serving",
    "state_file",
    "status",
    "stop",
    "unauthorized_hint",
]
