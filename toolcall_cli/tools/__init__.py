"""Tools: plugin files loaded into a registry, each tool's JSON Schema, and the executor that
validates, approves and runs calls (in threads, or isolated in a worker process). A module
whose name starts with `_` is private to the package."""
