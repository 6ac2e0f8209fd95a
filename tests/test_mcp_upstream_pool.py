"""The upstream pool's loop: work abandoned by its caller ends quietly."""

from __future__ import annotations

import asyncio
import gc
import logging
import time

import pytest

pytest.importorskip("mcp")

from toolsearch.mcp.upstream import UpstreamPool  # noqa: E402


async def _fails_once_cancelled() -> None:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        raise RuntimeError("the upstream broke while the call was being cancelled") from None


def test_a_call_its_caller_gave_up_on_leaves_no_unretrieved_task_exception(caplog: pytest.LogCaptureFixture) -> None:
    pool = UpstreamPool()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            future = pool.submit(_fails_once_cancelled())
            time.sleep(0.2)  # the task is running on the pool's loop
            future.cancel()  # the caller hung up
            time.sleep(0.5)  # the task fails while being cancelled
            del future  # its callbacks were the last references to the task
            gc.collect()
            pool.run(asyncio.sleep(0))  # let the loop run whatever the collection scheduled
        assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    finally:
        pool.close()
