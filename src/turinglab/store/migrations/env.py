"""Alembic environment: always given a live connection by turinglab.store.migrations."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # `alembic` on the command line: alembic.ini names the database
    from sqlalchemy import create_engine

    from turinglab.store.database import store_url

    url = context.get_x_argument(as_dictionary=True).get("store") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    with create_engine(store_url(url)).begin() as conn:
        # Store() runs the same upgrade with the right detection of older stores.
        context.configure(connection=conn, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    # Batch mode: SQLite cannot ALTER most things, so Alembic rebuilds the table there.
    context.configure(connection=connection, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
