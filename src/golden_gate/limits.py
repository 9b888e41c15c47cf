"""Upper bounds on the settings that size a run, checked before anything starts.

Beyond them a run does not get better, it hangs or never ends: 100,000 requests in flight
took 54 s just to build the transport, and a billion runs an item never finish.
"""

MAX_CONCURRENCY = 1024  # requests or judge calls in flight at once
DEFAULT_CONCURRENCY = 8  # requests in flight unless set; the judge's follows the run's
MAX_RUNS = 100  # runs per item
MAX_RERUN_FAILURES = 10  # extra runs for a failed item
MAX_CANARIES = 20  # golden items the judge's canaries are derived from, per evaluator
MAX_RETRIES = 10  # retries of one request on transport faults
MAX_TIMEOUT_S = 3600.0  # any timeout or wait, in seconds: finite, and at most an hour
MAX_JUDGE_TOKENS = 65536  # generation cap of one verdict: far above what a verdict needs
# A JUnit results file is read a chunk at a time: its memory is bounded by the test cases kept and
# the text of their names and messages (beyond either, the report is incomplete), and by the
# longest tag expat must hold whole (beyond, the file is refused).
MAX_JUNIT_CASES = 40_000
MAX_JUNIT_TEXT_CHARS = 8_000_000
MAX_JUNIT_TOKEN_BYTES = 16 * 1024 * 1024
# A judge's reply: a verdict is a few KB; beyond this it is a fault or an attack (a gzip bomb
# expands 1,000 to 1), counted decoded, and the rest is never read.
MAX_JUDGE_REPLY_BYTES = 8 * 1024 * 1024
# A reply of the GitHub API or a cache service's JSON API (a page of files, a file's contents);
# a git blob's: GitHub serves blobs up to 100 MB (a baseline can be), base64 in JSON.
MAX_SERVICE_REPLY_BYTES = 32 * 1024 * 1024
MAX_BLOB_REPLY_BYTES = 100 * 1024 * 1024 * 4 // 3 + 1024 * 1024
# The whole of one such exchange, however steadily its bytes come; an archive transfer gets
# that and a second for each MiB it may carry (a service slower than 1 MiB/s is not worth it).
SERVICE_DEADLINE_S = 60.0
TRANSFER_BYTES_PER_S = 1024 * 1024


def transfer_deadline_s(size_bytes: int) -> float:
    """The deadline of one archive transfer of at most `size_bytes`."""
    return SERVICE_DEADLINE_S + size_bytes / TRANSFER_BYTES_PER_S
