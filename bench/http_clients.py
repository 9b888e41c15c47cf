"""CPU per request of the HTTP clients an eval could use, against one server in another process.

Each item of an `eval` is two HTTP exchanges (the assistant, the judge); this measures what one
costs the client: golden-gate's shipped client (the judge's `chat_completions.Client`, over
aiohttp, serialising the body as the SDK does), aiohttp's default session, httpx with
golden-gate's split pools (`transport.sharded`, what shipped before aiohttp) and a default
`httpx.AsyncClient`. The server is a minimal keep-alive HTTP/1.1 server on asyncio in a
process of its own, answering a chat completion at once, so the figures are the client's. One
process a client and concurrency, alternating; CPU from `getrusage`.

    .venv/bin/python bench/http_clients.py [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERDICT = '{"reasoning": "Thus, the score should be: true.", "score": true}'
MESSAGE = {"role": "assistant", "content": VERDICT}
REPLY = json.dumps(
    {
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "finish_reason": "stop", "message": MESSAGE}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    }
).encode()
BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 3000}]}).encode()
CLIENTS = ("golden-gate", "aiohttp", "httpx, split pools", "httpx")
CONCURRENCIES = (8, 32, 128)


async def _serve(port: int) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(REPLY), REPLY)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


async def _client(kind: str, url: str, requests: int, concurrency: int) -> float:
    """CPU milliseconds a request, after a warm-up."""
    headers = {"Content-Type": "application/json", "Authorization": "Bearer x"}
    slots = asyncio.Semaphore(concurrency)
    if kind == "golden-gate":
        sys.path.insert(0, str(ROOT / "src"))
        from golden_gate.evaluation.providers.chat_completions import Client

        ours = Client(
            url=url.removesuffix("/chat/completions"),
            api_key="x",
            timeout_s=60.0,
            connections=concurrency,
        )
        document = json.loads(BODY)

        async def one() -> None:
            async with slots:
                json.loads((await ours.post(document)).content)

        close = ours.aclose
    elif kind == "aiohttp":
        import aiohttp

        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))

        async def one() -> None:
            async with slots, session.post(url, data=BODY, headers=headers) as response:
                json.loads(await response.read())

        close = session.close
    else:
        import httpx

        if kind == "httpx, split pools":
            sys.path.insert(0, str(ROOT / "src"))
            from golden_gate.evaluation.transport import sharded

            client = httpx.AsyncClient(transport=sharded(concurrency, http=httpx))
        else:
            client = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency))

        async def one() -> None:
            async with slots:
                response = await client.post(url, content=BODY, headers=headers)
                json.loads(response.content)

        close = client.aclose
    await asyncio.gather(*(one() for _ in range(200)))
    before = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.gather(*(one() for _ in range(requests)))
    after = resource.getrusage(resource.RUSAGE_SELF)
    await close()
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return spent / requests * 1000


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(_serve(int(sys.argv[2])))
        return
    if sys.argv[1:2] == ["--client"]:
        kind, url, requests, concurrency = sys.argv[2], sys.argv[3], *map(int, sys.argv[4:6])
        print(json.dumps(asyncio.run(_client(kind, url, requests, concurrency))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        import time

        time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        print("| client | " + " | ".join(f"concurrency {c}" for c in CONCURRENCIES) + " |")
        print("|---" + "|---:" * len(CONCURRENCIES) + "|")
        for kind in CLIENTS:
            cells = []
            for concurrency in CONCURRENCIES:
                argv = [sys.executable, __file__, "--client", kind, url]
                argv += [str(args.requests), str(concurrency)]
                out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
                cells.append(f"{json.loads(out):.2f} ms")
            print(f"| {kind} | " + " | ".join(cells) + " |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
