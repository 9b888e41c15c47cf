"""The bundled example assistant that `golden-gate demo` starts and gates.

from golden_gate.example_assistant import start

with start("candidate") as assistant:  # 127.0.0.1, a free port
    assistant.url  # POST {url}/ask {"text": "..."}; GET {url}/health
"""

from golden_gate.example_assistant.answers import REFUSAL, VARIANTS, answer, golden_path
from golden_gate.example_assistant.server import RunningAssistant, main, start

__all__ = ["REFUSAL", "VARIANTS", "RunningAssistant", "answer", "golden_path", "main", "start"]
