"""Who wrote each message and control-event row of a game: the process whose store committed
it, beside the game's owner of record (`games.worker`, `owner_epoch`) read in the same
transaction, right after the insert. The rows themselves name no writer, so this is how the
checks (sim/promises.py) can see a stale owner's write: a process that lost a game to a
takeover must add nothing to it (store/fencing.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, event

TABLES = {"messages": "seq", "control_events": "idx"}  # a game's rows, and their order key


def watch(engine: Engine, process: str, now: Any, log: list[tuple[Any, ...]]) -> None:
    """Append (process, table, game id, seq/idx, owner, epoch, at) to `log` for every row of
    TABLES that `process` inserts through `engine` (SQLite: one writer at a time, so the
    owner read is the one the insert's transaction saw)."""

    def inserted(conn: Any, cursor: Any, statement: str, _: Any, context: Any, __: Any) -> None:
        table = next((t for t in TABLES if statement.startswith(f"INSERT INTO {t} ")), None)
        if table is None:
            return
        read = conn.connection.cursor()  # a cursor of its own: the insert's stays as it was
        try:
            for row in context.compiled_parameters:
                gid = row["game_id"]
                read.execute("SELECT worker, owner_epoch FROM games WHERE id = ?", (gid,))
                owner, epoch = read.fetchone()
                log.append((process, table, gid, row[TABLES[table]], owner, epoch, now()))
        finally:
            read.close()

    event.listen(engine, "after_cursor_execute", inserted)
