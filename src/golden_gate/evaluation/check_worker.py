"""The process a custom check runs in (started by evaluation/custom_checks.py, never imported).

Standard library only, started with `python -I`: no working directory, PYTHONPATH or user
site on its path. The first line on stdin names the checks (file name, function, source text:
the bytes the checks hash covers, read at the base ref); each later line asks one check about
one answer, and one line answers it on the protocol's own descriptor (what a check prints goes
to stderr, so it cannot forge an answer). A check that raises is answered as an error; one that
hangs or kills the process is the parent's to time out.
"""

import json
import os
import sys
import traceback
import types


def _load(spec):
    module = types.ModuleType("golden_gate_check_" + str(spec["index"]))
    module.__file__ = spec["file"]
    code = compile(spec["source"], spec["file"], "exec")
    exec(code, module.__dict__)
    function = getattr(module, spec["function"], None)
    if not callable(function):
        raise LookupError(f"{spec['file']} has no function {spec['function']!r}")
    return function


def _answer(value):
    if value is None:
        return {"skip": True}
    if isinstance(value, bool):
        return {"passed": value, "reason": ""}
    if (
        isinstance(value, tuple | list)
        and len(value) == 2
        and isinstance(value[0], bool)
        and isinstance(value[1], str | None)
    ):
        reason = value[1] or ""
        return {"passed": value[0], "reason": reason if len(reason) <= 500 else reason[:499] + "…"}
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:79] + "…"
    return {"error": f"returned {shown}, not (passed: bool, reason: str)"}


def _problem(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    at = next((f"{f.filename}:{f.lineno}" for f in reversed(frames) if f.filename != __file__), "")
    text = f"{type(exc).__name__}: {exc}"
    return (text if len(text) <= 300 else text[:299] + "…") + (f" (at {at})" if at else "")


def main():
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # print() in a check goes to stderr, never onto the protocol
    sys.stdout = sys.stderr
    specs = json.loads(sys.stdin.readline())
    functions = []
    for spec in specs:
        try:
            functions.append(_load(spec))
        except BaseException as exc:  # a check that fails to load errors every run it has
            functions.append(_problem(exc))
    for line in sys.stdin:
        request = json.loads(line)
        function = functions[request["check"]]
        if isinstance(function, str):
            reply = {"error": f"could not load: {function}"}
        else:
            try:
                reply = _answer(function(request["item"], request["answer"]))
            except Exception as exc:
                reply = {"error": _problem(exc)}
        channel.write(json.dumps(reply) + "\n")
        channel.flush()


if __name__ == "__main__":
    main()
