"""Rendering: results as text people read. Every untrusted string is escaped here (escape),
before a Jinja template (`templates/` at the top of the repository) sees it.

escape · render (the PR comment and the job summary) · charts (Mermaid) · junit (JUnit XML) ·
calibration (the calibration report) · promote (the baseline pull request's description) ·
drift (the drift issue).
"""
