"""Bounded load on `nxrt serve` (loopback, fixed request counts; bench/serve/load.py measures the same phases at
full size): 64 concurrent streaming clients with the queue above 64 all succeed; 256 concurrent clients with a
queue of 64 get only 200 or 429. The phases' rates and time-to-first-token percentiles are printed (-s), not
asserted: speed claims live in bench/."""

import importlib.util
import pathlib

import pytest

from serve_support import FIXTURE

LOAD = pathlib.Path(__file__).resolve().parents[2] / "bench" / "serve" / "load.py"


@pytest.fixture(scope="module")
def load():
    if not FIXTURE.exists():
        pytest.skip(f"the shared genai fixture is not at {FIXTURE}")
    spec = importlib.util.spec_from_file_location("serve_load", LOAD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("clients, queue, requests", [(64, 128, 256), (256, 64, 512)])
def test_concurrent_streaming_clients(load, clients, queue, requests):
    from serve_support import cli_path

    process, host, port = load.start(FIXTURE, cli_path(), "--threads", "1", "--max-batch", "16", "--max-queue",
                                     str(queue))
    try:
        result = load.phase(host, port, clients, requests, 16, [98])
    finally:
        process.terminate()
        assert process.wait(timeout=60) == 0
    print(f"{clients} clients, queue {queue}: {result}")
    statuses = result["statuses"]
    assert sum(statuses.values()) == requests
    if clients <= queue:
        assert statuses == {200: requests}
    else:
        assert set(statuses) <= {200, 429} and statuses.get(200, 0) >= queue
    assert result["tokens"] == 16 * statuses.get(200, 0)
