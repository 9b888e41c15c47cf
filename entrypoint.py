"""The Action's entrypoint: a thin adapter from the runner's environment to golden-gate.

The runner runs this image with the inputs as `INPUT_*` variables; `--post` is the
post-entrypoint (cleanup at the end of the job).
"""

import sys

from golden_gate.action.main import main

if __name__ == "__main__":
    sys.exit(main())
