"""The TLS context of the aiohttp clients (the assistant's, the judge's), built once.

The CAs httpx trusts for `verify=True`, so a run trusts what it trusted before: SSL_CERT_FILE,
else SSL_CERT_DIR, else certifi's bundle. Built without importing httpx (a tenth of a second
of start-up), and built once: loading a bundle costs 30-50 ms.
"""

from __future__ import annotations

import functools
import os
import ssl


@functools.cache
def context() -> ssl.SSLContext:
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
