"""A Streamlit server started by the tests or the benchmarks: a free port, its health check, its stop.

One copy of what the browser tests (``tests/conftest.py::served_app``) and the benchmarks (``bench/``) did each
on their own: ask ``/_stcore/health`` until it answers 200, and give up with the reason when the process has
exited or the time is up; stop the process (terminate, then kill). Nothing here starts a server or reads data.
"""

from __future__ import annotations

import socket
import time
import urllib.request


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc=None, timeout_s: float = 120.0, *, poll_s: float = 0.2, log: str | None = None) -> None:
    """Return once ``url``'s Streamlit health check answers 200.

    Parameters
    ----------
    url : str
        The server's base URL, e.g. ``http://127.0.0.1:8501``.
    proc : subprocess.Popen, optional
        The server's process: if it exits first, fail at once instead of waiting out the time.
    timeout_s : float
        Seconds to wait in all.
    poll_s : float
        Seconds between two checks.
    log : str, optional
        Where the server's output went (named in the error).

    Raises
    ------
    RuntimeError
        The process exited, or no healthy answer within ``timeout_s``; the message says which.
    """
    deadline = time.monotonic() + timeout_s
    where = f" (see {log})" if log else ""
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with status {proc.returncode} before it answered{where}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not answer its health check within {timeout_s:g} s{where}")
        time.sleep(poll_s)


def stop(proc, timeout_s: float = 15.0) -> None:
    """Stop a server process: terminate it, and kill it if it has not exited after ``timeout_s`` seconds."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
