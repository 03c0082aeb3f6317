"""The embedded server's process entry point (``python -m jevalkit.local._server_process``).

llama-cpp-python's OpenAI-compatible server, with one change: every completion is evaluated
from a fresh context. Out of the box it reuses the previous request's KV cache when prompts share
a prefix, and the replayed logits differ enough that the same seed at temperature 1 gave
different text on a first and a repeated request. Starting fresh costs one prompt evaluation and
makes a request's output depend only on the request.
"""

from __future__ import annotations


def serve_fresh() -> None:
    """Patch ``Llama.create_completion`` to reset the context first, then run the server."""
    import llama_cpp
    from llama_cpp.server.__main__ import main

    create_completion = llama_cpp.Llama.create_completion

    def fresh_create_completion(self: llama_cpp.Llama, *args, **kwargs):
        self.reset()
        return create_completion(self, *args, **kwargs)

    llama_cpp.Llama.create_completion = fresh_create_completion
    main()


if __name__ == "__main__":
    serve_fresh()
