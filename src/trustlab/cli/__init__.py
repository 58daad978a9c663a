"""The ``trustlab`` command line. It only calls the public API."""
