"""`runner-host` in the assistant's URL: the runner's address found from the container's default
route (a /proc/net/route table), said in the log, and a server bound to loopback only named.

Offline, other loopback addresses stand for a runner's gateway: a route table whose default
gateway is 127.0.0.2 makes the Action look there, and a server bound to 127.0.0.2 answers there
and nowhere else (as one bound to 0.0.0.0 answers at the gateway), while one bound to
127.0.0.3 is not found (as one bound to the runner's 127.0.0.1 is not). The container tier
(tests/container) runs the same with the real gateway of a bridge and a job network.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from golden_gate.evaluation import runner_host
from tests.fakes.assistant_server import AssistantServer

# A route table as a container on Docker's default bridge has it (172.17.0.1), with the
# header, a link route, and a second default route of a higher metric.
BRIDGE_ROUTES = (
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
    "eth1\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
)


def route_table(path: Path, gateway: str, *, metric: int = 0) -> Path:
    """A /proc/net/route file with one default route through `gateway`."""
    word = int.from_bytes(socket.inet_aton(gateway), "little")
    path.write_text(
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        f"eth0\t00000000\t{word:08X}\t0003\t0\t0\t{metric}\t00000000\t0\t0\t0\n"
    )
    return path


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def served_only_at(host: str, answers: dict[str, str] | None = None):
    """The fake assistant on `host`, its port held unanswered on the other loopback addresses
    the gateway lookup tries (bound, never listening: a connection there is refused), so a
    server another test runs on 127.0.0.1 cannot answer in its place."""
    for _ in range(20):
        with AssistantServer(answers, host=host) as server:
            held = []
            try:
                for other in {"127.0.0.1", "127.0.0.2"} - {host}:
                    holder = socket.socket()
                    held.append(holder)
                    holder.bind((other, server.port))
            except OSError:
                continue  # that port is someone's on another address: another port
            else:
                yield server
                return
            finally:
                for holder in held:
                    holder.close()
    raise AssertionError("no port free on every loopback address tried")


# -- the route table --------------------------------------------------------------------------


def test_the_gateway_is_the_default_route_of_the_lowest_metric(tmp_path):
    path = tmp_path / "route"
    path.write_text(BRIDGE_ROUTES)
    assert runner_host.default_gateway(path) == "172.17.0.1"
    # The first default route's metric raised above the second's: the second wins.
    first = "\t0\t00000000\t0\t0\t0\n"
    path.write_text(BRIDGE_ROUTES.replace(first, first.replace("\t0\t", "\t200\t", 1), 1))
    assert runner_host.default_gateway(path) == "192.168.2.1"


@pytest.mark.parametrize(
    "table",
    [
        "",  # empty
        BRIDGE_ROUTES.splitlines()[0] + "\n",  # the header alone
        # a route that is down (flags 0002), a default route without a gateway (0001), a host
        # route through a gateway, and lines that are not a route table's
        "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n"
        "eth0\t00000000\t010011AC\t0002\t0\t0\t0\t00000000\n"
        "eth0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\n"
        "eth0\t0A00000A\t010011AC\t0003\t0\t0\t0\tFFFFFFFF\n"
        "eth0\tzz\t010011AC\t0003\t0\t0\t0\t00000000\n"
        "garbage\n",
    ],
    ids=["empty", "header-only", "no-usable-default-route"],
)
def test_a_table_without_a_usable_default_route_has_no_gateway(tmp_path, table):
    path = tmp_path / "route"
    path.write_text(table)
    assert runner_host.default_gateway(path) is None
    assert runner_host.default_gateway(tmp_path / "missing") is None


def test_outside_a_container_runner_host_is_this_machine(tmp_path):
    tried, note = runner_host.candidates({}, marks=(tmp_path / ".dockerenv",))
    assert [c.address for c in tried] == ["127.0.0.1"] and note == ""
    (tmp_path / ".dockerenv").touch()
    route = tmp_path / "route"
    route.write_text(BRIDGE_ROUTES)
    tried, _ = runner_host.candidates({runner_host.ROUTE_FILE_ENV: str(route)})
    assert [c.address for c in tried] == ["127.0.0.1", "172.17.0.1"]


# -- resolving a URL --------------------------------------------------------------------------


def resolve(url: str, route: Path, **kw) -> str:
    return asyncio.run(runner_host.resolve(url, env={runner_host.ROUTE_FILE_ENV: str(route)}, **kw))


def test_a_server_on_all_interfaces_is_reached_at_the_gateway(tmp_path, capsys):
    route = route_table(tmp_path / "route", "127.0.0.2")
    with served_only_at("127.0.0.2") as server:
        port = server.port
        url = resolve(f"http://user:secret@RUNNER-HOST:{port}/api?x=1", route)
    assert url == f"http://user:secret@127.0.0.2:{port}/api?x=1"
    out = capsys.readouterr().out
    assert f"runner-host is 127.0.0.2 (the gateway of this container's network, {route})" in out
    assert "secret" not in out


def test_a_server_sharing_the_namespace_is_reached_on_loopback(tmp_path, capsys):
    route = route_table(tmp_path / "route", "127.0.0.2")
    with AssistantServer() as server:
        assert resolve(f"http://runner-host:{server.port}", route) == server.url
    assert "runner-host is 127.0.0.1 (loopback)" in capsys.readouterr().out


def test_a_server_bound_to_loopback_only_is_one_sentence_saying_to_bind_all_interfaces(tmp_path):
    route = route_table(tmp_path / "route", "127.0.0.2")
    with served_only_at("127.0.0.3") as server:  # answers neither at .1 nor at .2
        port = server.port
        with pytest.raises(runner_host.RunnerHostUnreachable) as caught:
            resolve(f"http://runner-host:{port}", route)
    said = str(caught.value)
    assert said == (
        f"nothing answers at runner-host port {port}: tried 127.0.0.1 (loopback): "
        "connection refused; 127.0.0.2 (the gateway of this container's network, "
        f"{route}): connection refused; a server an earlier step started on the runner must "
        "listen on all interfaces (bind 0.0.0.0, not 127.0.0.1) and be up before this step"
    )


def test_no_route_table_says_so(tmp_path):
    port = free_port("127.0.0.1")
    with pytest.raises(runner_host.RunnerHostUnreachable, match="no default route in"):
        resolve(f"http://runner-host:{port}", tmp_path / "missing")


def test_other_urls_are_left_alone_without_a_probe(tmp_path, capsys):
    route = tmp_path / "never-read"
    for url in ("http://127.0.0.1:9", "http://runner-host.example:9", "http://xrunner-host:9"):
        assert resolve(url, route) == url
    assert capsys.readouterr().out == ""


# -- through the doors ------------------------------------------------------------------------


def items(path: Path, n: int = 4) -> dict[str, str]:
    """`n` items whose right answer names a port; their questions by id."""
    questions = {f"q{i}": f"Which port does service {i} listen on?" for i in range(n)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"id": k, "question": q, "reference_key_points": [f"port {8000 + i}"]})
            + "\n"
            for i, (k, q) in enumerate(questions.items())
        )
    )
    return questions


def answers(questions: dict[str, str]) -> dict[str, str]:
    return {q: f"It listens on port {8000 + i}." for i, q in enumerate(questions.values())}


def test_the_action_gates_the_server_an_earlier_step_started(world, tmp_path):
    questions = items(world.workspace / "evals" / "golden.jsonl")
    route = route_table(tmp_path / "route", "127.0.0.2")
    with served_only_at("127.0.0.2", answers(questions)) as server:
        port = server.port
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            extra_env={runner_host.ROUTE_FILE_ENV: str(route)},
            judge_model="keypoints",
            # Credentials in the URL go to the server found, and into nothing written.
            assistant_url=f"http://gate:url-pa55word@runner-host:{port}",
            subset_tags="*",
            floor="0",
        )
        sent = [r.headers.get("authorization", "") for r in server.requests]
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.outputs["verdict"] == "passed"
    assert "runner-host is 127.0.0.2 (the gateway of this container's network" in done.stdout
    assert sent and all(h.startswith("Basic ") for h in sent)
    text = (world.workspace / "golden-gate" / "report.json").read_text()
    assert json.loads(text)["assistant"]["url"] == f"http://127.0.0.2:{port}"
    assert "url-pa55word" not in text + done.stdout.replace("::add-mask::url-pa55word", "")


def test_the_action_names_a_server_bound_to_loopback_only_and_still_writes_the_report(
    world, tmp_path
):
    questions = items(world.workspace / "evals" / "golden.jsonl")
    route = route_table(tmp_path / "route", "127.0.0.2")
    with served_only_at("127.0.0.3", answers(questions)) as server:
        done = world.run(
            "workflow_dispatch",
            world.event("workflow_dispatch"),
            extra_env={runner_host.ROUTE_FILE_ENV: str(route)},
            judge_model="keypoints",
            assistant_url=f"http://runner-host:{server.port}",
            subset_tags="*",
            floor="0",
        )
        assert server.request_count == 0
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.outputs["verdict"] == "incomplete"
    assert "bind 0.0.0.0, not 127.0.0.1" in done.stdout
    report = json.loads((world.workspace / "golden-gate" / "report.json").read_text())
    assert report["complete"] is False
    assert "bind 0.0.0.0" in report["incomplete_reason"]
    assert sorted(report["not_asked"]) == sorted(questions)


def cli(*args: object, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "golden_gate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, **env},
    )


def test_the_command_reaches_runner_host_on_this_machine(tmp_path):
    questions = items(tmp_path / "golden.jsonl")
    # This machine may itself be a container: the route file keeps its gateway out of it.
    env = {runner_host.ROUTE_FILE_ENV: str(route_table(tmp_path / "route", "127.0.0.2"))}
    with AssistantServer(answers(questions)) as server:
        url = server.url
        done = cli(
            "eval", "--golden", "golden.jsonl", "--judge-model", "keypoints",
            "--assistant-url", f"http://runner-host:{server.port}", "-o", "report.json",
            env=env, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "runner-host is 127.0.0.1 (loopback)" in done.stdout + done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["assistant"]["url"] == url


@pytest.mark.parametrize("url", ["https://runner-host:8443", "https://Runner-Host/ask"])
def test_runner_host_over_https_is_bad_input(tmp_path, url):
    items(tmp_path / "golden.jsonl")
    done = cli(
        "eval", "--golden", "golden.jsonl", "--judge-model", "keypoints", "--assistant-url", url,
        env={}, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "runner-host is reached by its address" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_gateway_that_drops_the_connection_names_a_firewall_not_the_bind(tmp_path):
    """A listener whose queue is full drops new connections, as a firewall on a self-hosted
    runner drops what containers send to the host: no answer, not a refusal."""
    route = route_table(tmp_path / "route", "127.0.0.2")
    # The port held on 127.0.0.1 (bound, not listening: refused there, and nobody else's).
    with socket.socket() as held, socket.socket() as listener:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        listener.bind(("127.0.0.2", port))
        listener.listen(0)
        waiting = []
        try:
            for _ in range(2):  # the first fills the queue, the second is dropped
                client = socket.socket()
                client.settimeout(0.5)
                waiting.append(client)
                with contextlib.suppress(OSError):
                    client.connect(("127.0.0.2", port))
            with pytest.raises(runner_host.RunnerHostUnreachable) as caught:
                resolve(f"http://runner-host:{port}", route, timeout_s=0.5)
        finally:
            for client in waiting:
                client.close()
    said = str(caught.value)
    assert "127.0.0.2 (the gateway of this container's network" in said
    assert "no answer within 0.5 s" in said
    assert said.endswith(
        "a firewall on the runner may drop what containers send to it: allow the port from "
        "Docker's networks, and bind the server to 0.0.0.0"
    )


def test_a_fully_qualified_runner_host_is_runner_host(tmp_path):
    route = route_table(tmp_path / "route", "127.0.0.2")
    with AssistantServer() as server:
        assert resolve(f"http://runner-host.:{server.port}/ask", route) == server.url + "/ask"
    assert not runner_host.names_runner_host("http://[::1")  # not a URL: no probe, no crash
