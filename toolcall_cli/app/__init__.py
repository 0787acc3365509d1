"""Options, the config file and the environment turned into a session, for the command line and
for any other caller (a notebook, a test, a server): no typer here, and nothing exits. What
cannot be built is an AppError, one line with the kind of failure it is.

Public here: `options` (what a session can be asked for, in groups, each option with its flag),
`settings` (what the options, environment and config resolve to), `build` (the session, its
tools, and what a trace's header records), `replaying` (a replay's options from a recording),
`variants` (the strategies compare and `prompt --all` set side by side), `errors` (AppError),
`library` (`toolcall_cli.ask`). Private: `_model_choice` (which model) and `_measured` (the
defaults the bench measured for a kind of server)."""
