from golden_gate.cli import run

run()
