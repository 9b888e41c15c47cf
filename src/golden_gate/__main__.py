import sys

from golden_gate.cli import main

sys.exit(main())
