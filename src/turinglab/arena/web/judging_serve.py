"""Serve ITT human judging of one study folder on its own:
`python -m turinglab.arena.web.judging_serve STUDY_DIR [PORT] [BATCH_SIZE]` (until the CLI wires
`turinglab serve --itt-study DIR`). The admin password comes from TURINGLAB_ADMIN_PASSWORD, or
is generated and printed once, as for the arena."""

from __future__ import annotations

import sys
from pathlib import Path

from turinglab.arena.itt.judging import create_judging_app
from turinglab.arena.web.serve import PASSWORD_ENV, admin_password


def serve_judging(
    study_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    batch_size: int = 20,
    seed: int = 0,
    min_control_accuracy: float = 0.75,
) -> None:
    import uvicorn

    password, generated = admin_password()
    try:
        app = create_judging_app(
            study_dir,
            admin_password=password,
            batch_size=batch_size,
            seed=seed,
            min_control_accuracy=min_control_accuracy,
        )
    except (ValueError, OSError) as err:
        raise SystemExit(f"error: {err}") from None
    if generated:
        print(f"admin password (set {PASSWORD_ENV} to choose one): {password}", file=sys.stderr)
    store = app.state.judging
    print(
        f"judging: http://{host}:{port}/judge  ({len(store.candidates)} responses, batches of "
        f"{batch_size}, {len(store.judges)} judges so far)",
        file=sys.stderr,
    )
    print(f"admin: http://{host}:{port}/judge/admin", file=sys.stderr)
    uvicorn.run(app, host=host, port=port, log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(
            "usage: python -m turinglab.arena.web.judging_serve STUDY_DIR [PORT] [SIZE]"
        )
    serve_judging(
        Path(sys.argv[1]),
        port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000,
        batch_size=int(sys.argv[3]) if len(sys.argv) > 3 else 20,
    )
