"""`toolcall eval`: many questions, each with what counts as right, run under every model and
strategy asked for, graded, and reported in one table.

`cases` (case files: JSONL or TOML, and BFCL's format in `bfcl`), `matching` (a call against
the calls expected, as BFCL's AST checker matches them), `grading` (an answer against the
answer expected; non-answers told apart), `runner` (the matrix of models, strategies, cases
and seeds, each run traced), `report` (the table, the per-case grid, JSON and the HTML page).
Below the command line: no typer here, and nothing exits; what cannot be done is an AppError.
"""
