"""The Action's entrypoint: a thin adapter from the runner's environment to golden-gate.

The runner runs this image with the inputs as `INPUT_*` variables; `--post` is the
post-entrypoint (cleanup at the end of the job).
"""

from golden_gate import process
from golden_gate.action.main import main

if __name__ == "__main__":
    process.exit(main())  # without the interpreter's tear-down (process.exit)
