"""golden-gate: a statistical quality gate for LLM-backed services."""

__version__ = "0.2.0"
# The repository the Action is published from (OWNER/NAME), which `init` writes into workflows:
# stamped by the release (scripts/release-image.sh commit-tag) into the release commit, empty
# on a branch. A fork that publishes the Action itself changes this one line.
ACTION_REPOSITORY = ""
