"""What `serve` checks before it writes anything: that it can listen where it was told, that
the Redis it was given answers, and that the store is one it may write (not someone else's
database, not read-only). Each problem is one line; nothing is created for a server that
cannot start."""

from __future__ import annotations

import re
import socket

from turinglab.store.location import StoreLocationError, check_store

_REDIS_SCHEMES = ("redis", "rediss", "unix")


def listen_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port (busy, not an address of this machine, a
    name that does not resolve), or None. Binds every address the host resolves to, as
    uvicorn will, and lets go at once."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _name, address in found:
            with socket.socket(family, kind, proto) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(address)
    except OSError as err:  # socket.gaierror included
        why = err.strerror or str(err)
        return f"--host {host} --port {port}: cannot listen there ({why}); nothing was started"
    return None


def redis_problem(url: str) -> str | None:
    """Why `url` is not a Redis this process can use (not a Redis URL, or no answer to a
    PING within a few seconds), or None."""
    shown = re.sub(r"(//[^/@]*:)[^/@]*@", r"\1***@", url)  # no password on the terminal
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in _REDIS_SCHEMES:
        return f"--redis {shown}: not a Redis URL; the form is redis://host:port/db"
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5)
    except ValueError as err:
        return f"--redis {shown}: not a valid Redis URL ({err})"
    try:
        client.ping()
    except redis.RedisError as err:
        why = " ".join(str(err).split())
        return f"--redis {shown}: no answer ({why}); is Redis running there?"
    finally:
        client.close()
    return None


def store_problem(store: str) -> str | None:
    """Why the arena may not write to `store` (the checks `turinglab run` makes), or None."""
    try:
        check_store(store, create=True)
    except StoreLocationError as err:
        return str(err)
    return None
