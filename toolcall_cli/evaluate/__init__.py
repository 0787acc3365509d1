"""`toolcall eval`: many questions, each with what counts as right, run under every model and
strategy asked for, graded, and reported in one table.
Below the command line: no typer here, and nothing exits; what cannot be done is an AppError.

Public here: `cases` (case files: JSONL or TOML, and BFCL's format through `_bfcl`), `runner`
(the matrix of models, strategies, cases and seeds, each run traced), `report` (the table, the
per-case grid, JSON), `page` (the HTML page), `figures` (a run's figures, which compare
shares). Private: `_matching` (a call against the calls expected, as BFCL's AST checker matches
them), `_grading` (an answer against the answer expected; non-answers told apart), `_verdict`
(one run against its case)."""
