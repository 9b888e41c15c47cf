"""The TLS context of the aiohttp clients (the assistant's, the judge's), built once.

The CAs httpx trusts for `verify=True`, so a run trusts what it trusted before: SSL_CERT_FILE,
else SSL_CERT_DIR, else certifi's bundle. Built without importing httpx (a tenth of a second
of start-up), and built once: loading a bundle costs 30-50 ms.
"""

from __future__ import annotations

import functools
import os
import ssl
import sys

from golden_gate.errors import causes


@functools.cache
def context() -> ssl.SSLContext:
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


HINT = "a private CA: set SSL_CERT_FILE to a bundle holding it and the public CAs"


def untrusted_certificate(exc: BaseException) -> bool:
    """Whether `exc` is (or was raised from) a failed certificate verification: the same
    certificate fails every attempt, so it is said once and not retried."""
    aiohttp = sys.modules.get("aiohttp")  # never imported to read an error
    kinds: tuple[type[BaseException], ...] = (ssl.SSLCertVerificationError,)
    if aiohttp is not None:
        kinds += (aiohttp.ClientConnectorCertificateError,)
    return any(isinstance(cause, kinds) for cause in causes(exc, implicit=True))


def wrong_host(said: str) -> bool:
    """Whether OpenSSL's words for a failed verification say the certificate is for another
    host ("Hostname mismatch", "IP address mismatch"), not from an untrusted CA."""
    return "mismatch" in said.lower()
