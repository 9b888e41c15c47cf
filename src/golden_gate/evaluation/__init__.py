"""Evaluation: ask the assistant each item, check the answer, judge it, and aggregate a report.

target + transport (the assistant over HTTP) · compose (start it first) · checks (deterministic)
· judge, judge_client, providers, tracing, deferred_judge (the LLM judge through openevals) ·
evaluators (named evaluators and judge panels) · cache + cache_location (the verdict cache and
where it may live) · preflight · progress · evaluate (the loop) · calibrate (the judge against
human labels).

A new evaluator: a preset in presets.py (its prompt, the context it needs); a new judge
provider: a module in providers/ and its line in providers.PROVIDERS.
"""
