"""`python -m golden_gate.example_assistant --host 0.0.0.0 --port 8080 --variant candidate`."""

import sys

from golden_gate.example_assistant.server import main

if __name__ == "__main__":
    sys.exit(main())
