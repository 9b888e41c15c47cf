"""Ollama's OpenAI-compatible API, on this machine by default (where `ollama serve` listens).

A local server takes no key, but the OpenAI SDK insists on one: OLLAMA_API_KEY when set (for
Ollama's cloud, through judge-base-url), else a placeholder Ollama ignores. The generation cap
travels as `max_tokens`, the field Ollama's Chat Completions read.
"""

from golden_gate.evaluation.providers.openai import OpenAICompatible

PROVIDER = OpenAICompatible(
    name="ollama",
    title="Ollama",
    key_env=("OLLAMA_API_KEY",),
    key_required=False,
    placeholder_key="ollama",
    default_endpoint="http://127.0.0.1:11434/v1",
    cap_field="max_tokens",
)
