"""HTTPS as users meet it: an assistant and an `openai:` judge behind a certificate.

Real HTTPS servers on 127.0.0.1 (the fakes given an `ssl_context`), a throwaway CA made for the
session, and `golden-gate eval` run as a user runs it: a subprocess, since the CAs trusted are
read from SSL_CERT_FILE / SSL_CERT_DIR once per process (evaluation/tls.py caches the context).
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from golden_gate.evaluation.providers.openai import FORCE_LANGCHAIN
from golden_gate.evaluation.target import error_hint
from tests.fakes.assistant_server import AssistantServer
from tests.fakes.judge_server import JudgeServer

DUMMY_KEY = "sk-test-not-a-real-key"
ANSWER = "Set option 1 in the config, then restart the server."
ITEMS = 3


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the CA's certificate (PEM): what a runner must trust
    ca_dir: Path | None  # a hashed directory holding only the CA (SSL_CERT_DIR); None: no openssl
    server: tuple[Path, Path]  # certificate and key for 127.0.0.1 and localhost, signed by the CA
    elsewhere: tuple[Path, Path]  # ... for another host only (service.example), signed by it

    @staticmethod
    def context(pair: tuple[Path, Path]) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*pair)
        return context


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _valid(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        builder.serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """A throwaway CA, and two certificates it signed: for 127.0.0.1 (an IP SAN) and
    localhost, and for another host; with the extensions a strict verifier (Python 3.13's
    default) asks for."""
    folder = tmp_path_factory.mktemp("tls")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("golden-gate test CA")
    ca_id = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        _valid(x509.CertificateBuilder())
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(ca_id, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "ca.pem").write_bytes(_pem(ca))

    def leaf(stem: str, names: list[x509.GeneralName]) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = (
            _valid(x509.CertificateBuilder())
            .subject_name(_name(stem))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_id),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        chain, secret = folder / f"{stem}.pem", folder / f"{stem}.key"
        chain.write_bytes(_pem(certificate))
        secret.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return chain, secret

    server = leaf(
        "localhost",
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    elsewhere = leaf("service.example", [x509.DNSName("service.example")])
    ca_dir = None
    if (openssl := shutil.which("openssl")) is not None:
        # OpenSSL finds a CA in a directory by its subject's hash: `<hash>.0`.
        subject_hash = subprocess.run(
            [openssl, "x509", "-subject_hash", "-noout", "-in", str(folder / "ca.pem")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        ca_dir = folder / "ca-dir"
        ca_dir.mkdir()
        (ca_dir / f"{subject_hash}.0").write_bytes(_pem(ca))
    return Certificates(folder / "ca.pem", ca_dir, server, elsewhere)


@pytest.fixture
def https_assistant(certificates: Certificates) -> Iterator[AssistantServer]:
    with AssistantServer(
        default_answer=ANSWER, ssl_context=Certificates.context(certificates.server)
    ) as assistant:
        yield assistant


@pytest.fixture
def https_judge(certificates: Certificates) -> Iterator[JudgeServer]:
    with JudgeServer(ssl_context=Certificates.context(certificates.server)) as judge:
        yield judge


def _golden(folder: Path) -> Path:
    path = folder / "golden.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": f"How do I set option {i}?",
                    "reference_key_points": ["restart the server"],
                }
            )
            + "\n"
            for i in range(ITEMS)
        ),
        encoding="utf-8",
    )
    return path


def _environment(**trust: str) -> dict[str, str]:
    """This process's environment without any CA setting or proxy, plus `trust`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("SSL_CERT_FILE", "SSL_CERT_DIR")
        and not name.upper().endswith("_PROXY")
        and not name.startswith(("OPENAI_", "GOLDEN_GATE_"))
    }
    return {**env, "OPENAI_API_KEY": DUMMY_KEY, **trust}


def _eval(
    folder: Path, assistant_url: str, judge_url: str | None, env: dict[str, str], *flags: str
) -> subprocess.CompletedProcess[str]:
    judge = (
        ["--judge-model", "openai:gpt-4.1-mini", "--judge-base-url", judge_url]
        if judge_url is not None
        else ["--judge-model", "keypoints"]
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "golden_gate",
            "eval",
            str(_golden(folder)),
            "--assistant-url",
            assistant_url,
            *judge,
            "--cache",
            "off",
            "--quiet",
            "-o",
            str(folder / "report.json"),
            *flags,
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
    )


def _report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def _on(path: str, env: dict[str, str]) -> dict[str, str]:
    """`env` for the judge's own client ("direct", the default for `openai:`) or LangChain's."""
    return {**env, FORCE_LANGCHAIN: "1"} if path == "langchain" else env


def _client_of(judge: JudgeServer) -> set[str]:
    """Which client made the judge's calls, by its User-Agent."""
    agents = {headers.get("user-agent", "") for headers in judge.headers}
    return {"direct" if agent.startswith("golden-gate/") else "langchain" for agent in agents}


def _trusted(certificates: Certificates, how: str) -> dict[str, str]:
    if how == "SSL_CERT_FILE":
        return _environment(SSL_CERT_FILE=str(certificates.ca))
    if certificates.ca_dir is None:
        pytest.skip("no openssl command to name the CA in a hashed directory")
    return _environment(SSL_CERT_DIR=str(certificates.ca_dir))


# -- a CA the runner is told to trust --------------------------------------------------------


@pytest.mark.parametrize(
    ("how", "path"),
    [("SSL_CERT_FILE", "direct"), ("SSL_CERT_DIR", "direct"), ("SSL_CERT_FILE", "langchain")],
)
def test_an_assistant_and_a_judge_over_https_signed_by_a_ca_the_runner_trusts(
    tmp_path, certificates, https_assistant, https_judge, how, path
):
    # The judge by name (localhost, a DNS SAN), the assistant by address (an IP SAN).
    judge_url = f"https://localhost:{https_judge.port}/v1"
    env = _on(path, _trusted(certificates, how))
    done = _eval(tmp_path, https_assistant.url, judge_url, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"golden-gate: {ITEMS}/{ITEMS} items passed")
    assert https_assistant.request_count == ITEMS
    assert [r.path for r in https_assistant.requests] == ["/ask"] * ITEMS
    # Every item judged over HTTPS by the client `path` names (the fake derives each verdict).
    assert set(https_judge.paths) == {"/v1/chat/completions"}
    assert https_judge.calls >= ITEMS
    assert _client_of(https_judge) == {path}
    report = _report(tmp_path)
    assert report["complete"] is True
    assert [run["status"] for item in report["results"] for run in item["run_results"]] == [
        "pass"
    ] * ITEMS


# -- a CA the runner does not trust (certifi's bundle only) ----------------------------------


def test_an_assistant_whose_certificate_is_not_trusted_stops_the_run_at_once_saying_so(
    tmp_path, https_assistant
):
    url = https_assistant.url
    done = _eval(tmp_path, url, None, _environment())
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith(f"golden-gate: incomplete: 0 of {ITEMS} items got a verdict")
    # One attempt (a certificate does not change on the next), then one sentence: what failed
    # (the certificate), where, and what to set.
    assert done.stderr.strip().splitlines()[-1] == (
        "golden-gate: error: the evaluation could not be completed: the assistant's first "
        f"answer (item 'q0', before the run) failed: cannot connect (Cannot connect to host "
        f"127.0.0.1:{https_assistant.port} ssl:True [SSLCertVerificationError: (1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer "
        f"certificate (_ssl.c:{_ssl_line(done.stderr)})')]) (POST {url}/ask): is the "
        "service's certificate valid and signed by a CA this runner trusts? (a private CA: set "
        "SSL_CERT_FILE to a bundle holding it and the public CAs)"
    )
    assert https_assistant.request_count == 0  # no request got past the handshake
    report = _report(tmp_path)
    assert report["complete"] is False and len(report["not_asked"]) == ITEMS


def test_a_judge_whose_certificate_is_not_trusted_stops_the_run_before_any_question(
    tmp_path, https_judge
):
    # Every call would fail the same way: the judge's preflight completes the handshake.
    with AssistantServer(default_answer=ANSWER) as assistant:  # plain HTTP: it answers
        done = _eval(tmp_path, assistant.url, https_judge.base_url, _environment())
        asked = assistant.request_count
    assert done.returncode == 3, done.stdout + done.stderr
    assert asked == 0 and https_judge.calls == 0
    assert done.stderr.strip().splitlines()[-1] == (
        "golden-gate: error: the judge at "
        f"{https_judge.base_url} cannot be reached (unable to get local issuer certificate): "
        "its certificate is not trusted here (a private CA: set SSL_CERT_FILE to a bundle "
        "holding it and the public CAs)"
    )


def test_a_judge_certificate_for_another_host_stops_the_run_naming_the_host(tmp_path, certificates):
    elsewhere = Certificates.context(certificates.elsewhere)
    with JudgeServer(ssl_context=elsewhere) as judge, AssistantServer() as assistant:
        trusted = _trusted(certificates, "SSL_CERT_FILE")
        url = judge.base_url
        done = _eval(tmp_path, assistant.url, url, trusted)
        asked = assistant.request_count
    assert done.returncode == 3, done.stdout + done.stderr
    assert asked == 0
    last = done.stderr.strip().splitlines()[-1]
    assert f"the judge at {url} cannot be reached (IP address mismatch" in last
    assert last.endswith("it is for another host: use a name it is for in judge-base-url")


@pytest.fixture
def certifi_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process trusting certifi's bundle only, as a runner without SSL_CERT_FILE does;
    the cached contexts rebuilt before and after."""
    from golden_gate.evaluation import tls, transport

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    tls.context.cache_clear()
    transport.tls_context.cache_clear()
    yield
    monkeypatch.undo()
    tls.context.cache_clear()
    transport.tls_context.cache_clear()


@pytest.mark.parametrize("path", ["direct", "langchain"])
def test_a_judge_call_to_an_untrusted_certificate_is_one_attempt_saying_what_to_set(
    https_judge, certifi_only, monkeypatch, path
):
    # Where no preflight looks (the provider's own endpoint, behind a TLS-inspecting proxy):
    # the same certificate fails every attempt, so one is made, and the error says what to set.
    from golden_gate.evaluation.judge import JudgeError, JudgeSettings, LLMJudge

    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    monkeypatch.setenv(FORCE_LANGCHAIN, "1" if path == "langchain" else "")
    settings = JudgeSettings(
        model="openai:gpt-4.1-mini", base_url=https_judge.base_url, max_retries=3, timeout_s=5
    )
    judge = LLMJudge(settings)

    async def call() -> Any:
        try:
            return await judge.judge(question="q", answer=ANSWER, reference="- restart")
        except JudgeError as exc:
            return exc
        finally:
            await judge.aclose()

    outcome = asyncio.run(call())
    assert isinstance(outcome, JudgeError), outcome
    assert outcome.attempts == 1
    said = str(outcome)
    assert "cannot connect (" in said and "CERTIFICATE_VERIFY_FAILED" in said
    assert said.endswith(
        "the judge's certificate is not trusted here (a private CA: set SSL_CERT_FILE to a "
        "bundle holding it and the public CAs)"
    )
    assert https_judge.calls == 0


# -- other ways TLS goes wrong ---------------------------------------------------------------


def test_a_trusted_certificate_for_another_host_is_named_as_such(tmp_path, certificates):
    with AssistantServer(
        default_answer=ANSWER, ssl_context=Certificates.context(certificates.elsewhere)
    ) as assistant:
        url = assistant.url
        done = _eval(tmp_path, url, None, _trusted(certificates, "SSL_CERT_FILE"))
        asked = assistant.request_count
    assert done.returncode == 3, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "certificate verify failed: IP address mismatch, certificate is not valid for " in last
    assert last.endswith(
        f"(POST {url}/ask): the service's certificate is not for this host: use a "
        "name it is for in `assistant-url`"
    )
    assert asked == 0


def test_an_https_url_to_a_plain_http_assistant_says_so(tmp_path, certificates):
    with AssistantServer(default_answer=ANSWER) as assistant:
        url, port = assistant.url.replace("http:", "https:"), assistant.port
        done = _eval(tmp_path, url, None, _trusted(certificates, "SSL_CERT_FILE"))
    assert done.returncode == 3, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    # aiohttp's words, then the hint (OpenSSL 3.0 says "wrong version number"; 3.2 other words).
    assert f"cannot connect (Cannot connect to host 127.0.0.1:{port} ssl:" in last
    assert "[SSL: " in last
    assert last.endswith(
        f"(POST {url}/ask): the URL says https: does the service speak plain http?"
    )


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        # aiohttp says "ssl:" of every connection to an https URL: no sign of plain HTTP.
        (
            "cannot connect (Cannot connect to host nowhere.invalid:443 ssl:default "
            "[Name or service not known])",
            "is the assistant running there?",
        ),
        (
            "cannot connect (Cannot connect to host 10.0.0.1:443 ssl:default "
            "[[SSL: RECORD_LAYER_FAILURE] record layer failure (_ssl.c:1010)])",
            "the URL says https: does the service speak plain http?",
        ),
        (
            "cannot connect (Cannot connect to host 10.0.0.1:443 ssl:True "
            "[SSLCertVerificationError: (1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
            "failed: certificate has expired (_ssl.c:1006)')])",
            "is the service's certificate valid and signed by a CA this runner trusts?",
        ),
        (
            "cannot connect (Cannot connect to host 10.0.0.1:443 ssl:default "
            "[[SSL: TLSV1_ALERT_PROTOCOL_VERSION] tlsv1 alert protocol version (_ssl.c:1006)])",
            "the TLS handshake with the service failed: see the SSL error",
        ),
    ],
)
def test_the_hint_for_an_https_connection_reads_what_failed(error, hint):
    assert error_hint(error, None, "https://10.0.0.1/ask").startswith(hint)


def _ssl_line(said: str) -> str:
    """The ssl module's source line in its error (it differs between Python builds)."""
    return said.split("(_ssl.c:", 1)[1].split(")", 1)[0]
