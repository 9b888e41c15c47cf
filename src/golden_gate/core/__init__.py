"""The core: golden sets, reports and the gate's statistics. Pure: no network, no subprocess,
no templates, no judge (pyproject's `pure-core` contract); files are read and written only
through `files` and `jsonl`.

golden (items) · report (what an evaluation found) · slim (a report as columns) · tally (its
items as the gate counts them) · stats (Wilson bound, paired sign-flip test, power) · gate (the
decision) · power · plan · rules (items the base branch defines) · merge (shards) · agreement
(kappas) · calibration (labels and the calibration report).
"""
