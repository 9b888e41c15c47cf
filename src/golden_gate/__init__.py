"""golden-gate: a statistical quality gate for LLM-backed services."""

__version__ = "0.2.0"
