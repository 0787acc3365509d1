"""`python -m toolcall_cli` runs the CLI."""

from toolcall_cli.cli import main

main()
