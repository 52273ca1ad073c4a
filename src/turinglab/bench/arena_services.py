"""The services under the arena benchmark: its own Redis, a proxy in front of PostgreSQL, and
the CPU each of them (and the arena's own PostgreSQL backends) used.

The benchmark never touches a shared service: it starts a redis-server of its own on a free
port (restarted, empty, by the `redis-restart` fault), and reaches PostgreSQL through a TCP
proxy of its own when the `pg-outage` fault needs to refuse connections. PostgreSQL's CPU is
read from /proc for the backends serving the benchmark's database (pg_stat_activity), so other
work on a shared server is not counted; its background writers are shared and not counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from turinglab.testing.tcp_proxy import TcpProxy


async def healthy(bases: list[str]) -> None:
    """Wait (up to 30 s each) until every server at `bases` answers /healthz."""
    async with aiohttp.ClientSession() as http:
        for base in bases:
            for _ in range(600):
                try:
                    async with http.get(base + "/healthz") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
            else:
                raise SystemExit(f"error: the server at {base} did not start")


def listening_socket(backlog: int = 4096) -> socket.socket:
    """A socket listening on a port the OS chose, to hand to a server process: held from the
    start, so no other process (or outgoing connection) can take the port between choosing it
    and serving on it (the benchmark and the tests)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(backlog)
    return sock


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def waited_s(pid: int) -> float:
    """Seconds the process's threads were ready to run but waited for a CPU (other work on the
    machine): what a busy shared machine adds to every figure here."""
    total = 0
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[1])
    return total / 1e9


class OwnRedis:
    """A redis-server of the benchmark's own on a free port, nothing persisted."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise SystemExit("error: redis-server is not installed (needed for --processes > 1)")
        self.exe = exe
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="turinglab-bench-redis-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.cpu_before_restarts = 0.0  # CPU of the servers a restart replaced

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [self.exe, "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen(
            [*command, "--dir", self.dir],
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            if self.proc.poll() is not None:
                raise SystemExit("error: the benchmark's redis-server did not start")
            time.sleep(0.05)
        raise SystemExit("error: the benchmark's redis-server did not answer")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.cpu_before_restarts += cpu_s(self.proc.pid)
            self.proc.kill()  # a crash: what it held is lost
            self.proc.wait(10)

    def restart(self) -> None:
        """Stopped and started again, empty (the fault)."""
        self.stop()
        self.start()

    def cpu(self) -> float:
        live = cpu_s(self.proc.pid) if self.proc is not None else 0.0
        return self.cpu_before_restarts + live

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class PgProxy:
    """A TcpProxy (turinglab.testing) in front of PostgreSQL, run on a thread of its own so
    that the benchmark's own loop stays free; `outage(s)` refuses new connections and cuts the
    open ones for `s` seconds (a database that went away and came back)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._call(self.proxy.start())
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{self.proxy.port}"
        self.url = urlunsplit(
            parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) > 1 else host)
        )

    def _call(self, coro: object) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)  # type: ignore[arg-type]

    def outage(self, seconds: float) -> None:
        self._call(self.proxy.refuse())
        self._loop.call_soon_threadsafe(self.proxy.cut)
        time.sleep(seconds)
        self._call(self.proxy.accept())

    def close(self) -> None:
        self._call(self.proxy.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class PgBackends:
    """CPU of the PostgreSQL backends serving one database, sampled every second (backends
    come and go with the connection pools; each is counted from when it was first seen, or
    from 0 when it started during the run)."""

    def __init__(self, url: str, database: str) -> None:
        from sqlalchemy import create_engine, text

        from turinglab.store.database import store_url

        self._engine = create_engine(store_url(url), pool_size=1)
        self._query = text("SELECT pid, backend_start FROM pg_stat_activity WHERE datname = :d")
        self.database = database
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.time()

    def __enter__(self) -> PgBackends:
        self._sample(initial=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._sample(initial=False)
        self._engine.dispose()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            with contextlib.suppress(Exception):  # the pg-outage fault: sample again later
                self._sample(initial=False)

    def _sample(self, *, initial: bool) -> None:
        with self._engine.connect() as conn:
            rows = conn.execute(self._query, {"d": self.database}).all()
        for pid, began in rows:
            used = cpu_s(pid)
            if pid not in self._first:
                new = not initial and began is not None and began.timestamp() >= self.started
                self._first[pid] = 0.0 if new else used
            self._last[pid] = max(self._last.get(pid, 0.0), used)

    def cpu(self) -> float:
        return sum(self._last[p] - self._first[p] for p in self._last)

    @property
    def backends(self) -> int:
        return len(self._last)
