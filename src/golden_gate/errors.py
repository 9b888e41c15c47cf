"""Errors a user can act on, each carrying the exit code the CLI and the Action use."""

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 3


class GateError(Exception):
    """Base class: the message is one sentence a user can act on."""

    exit_code = EXIT_INCOMPLETE


class InputError(GateError):
    """Bad input or configuration (a golden line, a report, a setting)."""

    exit_code = EXIT_BAD_INPUT


class IncompleteError(GateError):
    """The evaluation could not be completed (assistant down, judge unreachable, errors)."""

    exit_code = EXIT_INCOMPLETE


class OutputError(IncompleteError):
    """A result (report, comment, summary, outputs) could not be written: not a gate verdict."""
