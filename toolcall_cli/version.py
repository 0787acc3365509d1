"""The version, in one place below everything: the package facade re-exports it, and the trace
writer and `--version` read it without importing the facade (which sits above every layer)."""

__version__ = "0.1.0"
