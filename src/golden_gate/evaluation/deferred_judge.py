"""A model judge built on a background thread, so a run's first requests to the assistant leave
while it is built (for the providers that need the judge stack, openevals, LangChain and the
provider's SDK, about a second of imports).

What can be checked without that stack is checked before anything runs (evaluators.py): the
model's name and provider, the prompt file, the API key. Anything else the build finds wrong
is raised, as the same InputError, where the judge is first needed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from golden_gate.core.item_result import Verdict
from golden_gate.evaluation.judge import Judge


class DeferredJudge(Judge):
    """Stands for the judge `build` makes; `ready()` waits for it."""

    def __init__(self, build: Callable[[], Judge], *, name: str, temperature: float | None):
        self.name = name
        self.temperature = temperature
        self._built: Future[Judge] = Future()
        # Running from the start, so it cannot be cancelled: a waiter cancelled (a budget stop,
        # an interrupt) cancels the future it waits on, and the report still asks the judge for
        # its prompt hash.
        self._built.set_running_or_notify_cancel()
        self._thread = threading.Thread(
            target=self._build, args=(build,), name=f"build judge {name}", daemon=True
        )
        self._thread.start()

    def _build(self, build: Callable[[], Judge]) -> None:
        try:
            self._built.set_result(build())
        except BaseException as exc:  # handed to whoever needs the judge
            self._built.set_exception(exc)

    def built(self) -> Judge:
        """The judge, waiting for its build to end; the build's error if it failed."""
        return self._built.result()

    async def ready(self) -> Judge:
        """`built()` without blocking the event loop."""
        if not self._built.done():
            await asyncio.wrap_future(self._built)
        return self._built.result()

    @property
    def prompt_hash(self) -> str | None:
        return self.built().prompt_hash

    # A proxy: what is set is set on the judge it stands for.
    @prompt_hash.setter
    def prompt_hash(self, value: str | None) -> None:
        self.built().prompt_hash = value

    def _built_judge(self) -> Judge | None:
        """The judge if its build has ended well; never waits (a run cut short may ask)."""
        done = self._built.done() and self._built.exception() is None
        return self._built.result() if done else None

    @property
    def endpoint(self) -> str | None:
        judge = self._built_judge()
        return judge.endpoint if judge is not None else None

    @endpoint.setter
    def endpoint(self, value: str | None) -> None:
        self.built().endpoint = value

    @property
    def seed(self) -> int | None:
        judge = self._built_judge()
        return judge.seed if judge is not None else None

    @seed.setter
    def seed(self, value: int | None) -> None:
        self.built().seed = value

    def identity(self) -> str:
        return self.built().identity()

    async def judge(self, **kwargs: Any) -> Verdict:
        return await (await self.ready()).judge(**kwargs)

    async def aclose(self) -> None:
        try:
            judge = await self.ready()
        except Exception:  # a build that failed holds nothing; its error was raised elsewhere
            return
        await judge.aclose()
