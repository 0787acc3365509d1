"""Tools: plugin files loaded into a registry, each tool's JSON Schema, and the executor that
validates, approves and runs calls (in threads, or isolated in a worker process).

Public here: the modules `registry` (`tool`, the registry), `loader`, `schema`, `validation`,
`coerce`, `executor`, `pool`, `isolated`, `policy`, `dag`, `sandbox`, `reload`, `retrieval`,
`embed_cache`, `mcp_servers`, `mcp_spec`, and `worker` (run as `python -m
toolcall_cli.tools.worker`, as docs/tools.md names it). Private: `_outcome`, `_capture`,
`_plugin_guard`, `_import_check`, `_mcp_wire`, and the term lists."""
