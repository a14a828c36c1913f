"""The nxrt.jax exporter tests: skipped as a whole when jax is not installed."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("jax") else ["test_*.py"]


def pytest_terminal_summary(terminalreporter):
    if not importlib.util.find_spec("jax"):
        return
    import jax_harness
    for line in jax_harness.error_summary():
        terminalreporter.write_line(line)
