"""The admin's downloads: the whole export, the study as JSON lines, and live integrative-test
sessions as a judgements file. All read the open study's store (every process's games, and
earlier runs'), or this process's memory without one."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import Depends, FastAPI, Response

from turinglab.arena.core.hub import Arena
from turinglab.arena.web.admin_routes import AdminGuard
from turinglab.games.live_itt_judgements import live_itt_judgements
from turinglab.itt.judgements import judgements_csv
from turinglab.study_export import (
    flag_exclusions,
    interrogator_facts,
    study_jsonl,
    withdrawn_ids,
    without_withdrawn,
)


def add_export_routes(app: FastAPI, arena: Arena, guard: AdminGuard) -> None:
    guarded = [Depends(guard)]

    @app.get("/admin/export.json", dependencies=guarded)
    async def admin_export() -> Response:
        store = arena.store  # the open study's
        if store is not None:
            await store.flush()
            data = await asyncio.to_thread(store.export)
        else:
            data = arena.export()
        body = json.dumps(flag_exclusions(data), indent=1, ensure_ascii=False)
        return Response(
            body,
            media_type="application/json",
            headers={"Content-Disposition": 'attachment; filename="arena-export.json"'},
        )

    async def finished_records() -> list[dict[str, Any]]:
        store = arena.store  # the open study's
        if store is None:
            return list(arena.finished)
        # Every process's games, and those of earlier runs of the server.
        await store.flush()
        games = await asyncio.to_thread(store.records)
        return [g for g in games if g["status"] is not None]

    async def study_people() -> dict[str, dict[str, Any]]:
        """participant id -> {survey, recruitment, study_end, withdrawn}: from the store (every
        process's people), else this process's sessions."""
        store = arena.store  # the open study's
        if store is not None:
            await store.flush()
            return await asyncio.to_thread(store.participants)
        return {p.id: arena.person_entry(p) for p in arena.sessions.by_id.values()}

    async def finished_games() -> list[dict[str, Any]]:
        """The study's finished games, none with a withdrawn participant."""
        gone = withdrawn_ids(await study_people())
        return without_withdrawn(await finished_records(), gone)

    @app.get("/admin/export/study.jsonl", dependencies=guarded)
    async def admin_study() -> Response:
        people = await study_people()
        finished = without_withdrawn(await finished_records(), withdrawn_ids(people))
        surveys = {pid: p.get("survey") for pid, p in people.items()}
        return Response(
            study_jsonl(finished, surveys, interrogator_facts(people)),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'attachment; filename="arena-study.jsonl"'},
        )

    @app.get("/admin/export/live-itt.csv", dependencies=guarded)
    async def admin_live_itt() -> Response:
        """Live integrative-test sessions as the judgements file `turinglab itt score` reads."""
        rows = live_itt_judgements(await finished_games())
        return Response(
            judgements_csv(rows),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="live-itt-judgements.csv"'},
        )
