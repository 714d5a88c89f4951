"""Root conftest: makes the shared test helpers in tests/ (realapi, fakeapi) importable from every folder."""
