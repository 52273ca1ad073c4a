"""`python -m turinglab.arena [CONFIG|-] [PORT]`: the arena without the CLI (until `turinglab
serve` is wired to `turinglab.arena.web.serve`). '-' or nothing: the embedded agents."""

import sys

from turinglab.arena.web.serve import serve

if __name__ == "__main__":
    config = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    serve(config, port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000)
