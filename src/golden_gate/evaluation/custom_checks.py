"""Custom Python checks: a function `(item, answer) -> (passed, reason)` in a file the config
names, run in worker processes with a timeout.

A check is code, so it runs apart from the gate: in a `python -I` process of its own
(check_worker.py), fed the source text the checks hash covers (read at the base ref on a pull
request, like every rule file), never importing its neighbours in the checkout. A check that
hangs past `check-timeout` has its process killed and the run is an error; one that raises or
kills its process is an error with the reason. Neither is ever a pass, nor a stalled job. A
few processes are reused across answers (starting one per answer would cost more than most
checks).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import difflib
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from golden_gate.core.item_result import CheckOutcome

WORKER = Path(__file__).with_name("check_worker.py")
DEFAULT_FUNCTION = "check"
MAX_WORKERS = 2  # checks are CPU work beside the run's own: two cores' worth at most
_REPLY_LIMIT = 64 * 1024


class CustomCheck(BaseModel):
    """`path:function` from the config: a file and the function in it."""

    path: Path
    function: str = DEFAULT_FUNCTION

    @classmethod
    def parse(cls, text: str, root: Path | None = None) -> CustomCheck:
        path, sep, function = text.strip().rpartition(":")
        if not sep or not function.isidentifier():  # no function named (or a drive letter)
            path, function = text.strip(), DEFAULT_FUNCTION
        given = Path(path)
        if root is not None and not given.is_absolute():
            given = root / given
        return cls(path=given, function=function)

    @property
    def name(self) -> str:
        """The outcome's name: `custom:<file stem>.<function>`."""
        return f"custom:{self.path.stem}.{self.function}"

    def source(self) -> bytes:
        """The file's bytes; ValueError saying why they cannot be read or run."""
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise ValueError(f"{self.path}: cannot read the check ({exc.strerror})") from None
        try:
            tree = ast.parse(data, filename=str(self.path))
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            at = f"{self.path}:{line}" if line else str(self.path)
            why = exc.msg if isinstance(exc, SyntaxError) else str(exc)
            raise ValueError(f"{at}: the check is not valid Python ({why})") from None
        defined = [
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        if self.function not in defined:
            close = difflib.get_close_matches(self.function, defined, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ValueError(f"{self.path} has no function '{self.function}'{hint}")
        return data

    def identity(self) -> dict[str, str]:
        """What the checks hash covers: the function and the file's bytes, not its path (the
        base's copy lives elsewhere than the checkout's)."""
        digest = hashlib.sha256(self.source()).hexdigest()
        return {"file": self.path.name, "function": self.function, "sha256": digest}


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout_s)
        if not line:
            code = await self.process.wait()
            raise ProcessLookupError(f"the check's process exited (code {code})")
        reply = json.loads(line)
        if not isinstance(reply, dict):
            raise ValueError("the check's process answered something else than a reply")
        return reply

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()

    async def close(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            await self.kill()


class CustomChecks:
    """The run's custom checks and their worker processes (started when first needed)."""

    def __init__(self, checks: Sequence[CustomCheck], timeout_s: float) -> None:
        self.checks = list(checks)
        self.timeout_s = timeout_s
        self._specs = [
            {
                "index": i,
                "file": str(c.path),
                "function": c.function,
                "source": c.source().decode("utf-8", errors="replace"),
            }
            for i, c in enumerate(self.checks)
        ]
        self._idle: list[_Worker] = []
        self._started: list[_Worker] = []  # every worker, reaped by close()
        self._slots: asyncio.Semaphore | None = None

    async def _start(self) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            str(WORKER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=_REPLY_LIMIT,
        )
        assert process.stdin is not None
        worker = _Worker(process)
        self._started.append(worker)
        process.stdin.write((json.dumps(self._specs) + "\n").encode("utf-8"))
        await process.stdin.drain()
        return worker

    async def run(self, item: dict[str, Any], answer: str) -> list[CheckOutcome]:
        """Each check's outcome for one answer, in config order; `errored` on a hang, a crash
        or a reply that is no verdict."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_WORKERS)
        outcomes: list[CheckOutcome] = []
        async with self._slots:
            worker = self._idle.pop() if self._idle else await self._start()
            healthy = False
            try:
                for index, check in enumerate(self.checks):
                    request = {"check": index, "item": item, "answer": answer}
                    try:
                        reply = await worker.ask(request, self.timeout_s)
                    except TimeoutError:
                        await worker.kill()
                        worker = await self._start()
                        reply = {"error": f"no answer within check-timeout {self.timeout_s:g} s"}
                    except (ProcessLookupError, ValueError, OSError) as exc:
                        await worker.kill()
                        worker = await self._start()
                        reply = {"error": str(exc)}
                    outcome = _outcome(check, reply)
                    if outcome is not None:
                        outcomes.append(outcome)
                healthy = True
            finally:
                if healthy:
                    self._idle.append(worker)
                else:  # cancelled mid-request: its reply would answer the next question
                    with contextlib.suppress(ProcessLookupError):
                        worker.process.kill()
        return outcomes

    async def close(self) -> None:
        """Stop every worker (idle ones end on their closed stdin)."""
        started, self._started, self._idle = self._started, [], []
        for worker in started:
            await worker.close()


def _outcome(check: CustomCheck, reply: dict[str, Any]) -> CheckOutcome | None:
    if reply.get("skip") is True:
        return None
    if "error" in reply:
        return CheckOutcome(name=check.name, passed=False, errored=True, reason=str(reply["error"]))
    if not isinstance(reply.get("passed"), bool):
        return CheckOutcome(name=check.name, passed=False, errored=True, reason="no verdict")
    reason = str(reply.get("reason", ""))
    return CheckOutcome(name=check.name, passed=reply["passed"], reason=reason)
