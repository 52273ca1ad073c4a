from turinglab.cli import app

app()
