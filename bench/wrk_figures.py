"""wrk's figures from its output file, for the suites that drive the app with wrk.

`read(path, label)` returns requests per second and the p50 and p99 latencies in ms (from
`--latency`'s distribution), and exits with a message naming `label` and the file when any request
failed (a non-2xx answer or a socket error), since a figure made of failures measures nothing.
Standard library only; bench/enqueue.sh and bench/peers.sh import it from their inline scripts.
"""

import re
import sys


def read(path, label):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    errors = (int(bad.group(1)) if bad else 0) + (sum(map(int, sock.groups())) if sock else 0)
    if errors:
        sys.exit(f"bench: {errors} requests of {label} failed; see {path}")

    def ms(p):
        m = re.search(r"^\s*" + p + r"%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

    return rps, ms("50"), ms("99")
