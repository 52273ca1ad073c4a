"""The command line. Thin: it parses, calls the library, and prints.

One module per command or group: run.py, report.py, stores.py (`runs`, `export`, `migrate`),
serve.py, agents.py (`agents`, `chat`) and the sub-apps bench.py, stats.py, tagging.py, itt.py and
sim.py;
errors.py says why a command fails in one line, printing.py holds the console. Commands import
what they use when they run: `--help` must not pay for scipy, pandas, SQLAlchemy or the runner
(DESIGN.md, "Cheap start-up").
"""

from __future__ import annotations

import typer

from turinglab.cli import agents, report, run, serve, stores
from turinglab.cli.bench import bench_app
from turinglab.cli.errors import err_console
from turinglab.cli.itt import itt_app
from turinglab.cli.sim import sim_app
from turinglab.cli.stats import stats_app
from turinglab.cli.tagging import tag_app

app = typer.Typer(
    help="Turing Lab: run Turing tests between people and machines, store them, analyse them.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(bench_app, name="bench")
app.add_typer(stats_app, name="stats")
app.add_typer(tag_app, name="tag")
app.add_typer(itt_app, name="itt")
app.add_typer(sim_app, name="sim")
# Registered in the order `--help` lists them.
app.command()(run.run)
app.command()(report.report)
app.command()(stores.runs)
app.command()(stores.export)
app.command()(stores.migrate)
app.command()(serve.serve)
app.command()(agents.agents)
app.command()(agents.chat)


def main() -> None:
    """The console entry point: a feature whose optional extra is missing is one line, exit 2."""
    from rich.markup import escape

    from turinglab.extras import MissingExtra

    try:
        app()
    except MissingExtra as err:  # `[arena]` is not markup
        err_console.print(f"[red]error:[/] {escape(str(err))}", highlight=False)
        raise SystemExit(2) from None
