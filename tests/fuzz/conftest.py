"""The real-HTTPS fixtures of tests/server, for the fuzz job."""

from server.conftest import serve, tls_master, tls_paths

__all__ = ["serve", "tls_master", "tls_paths"]
