"""`/health` says when DuckLM restarts its local model server, and never to start it then.

The app serves on the scripted model, which the test stops; the keeper's view of that
server (`ducklm.models.local.state`) is set as the keeper sets it after a crash.
"""

from __future__ import annotations

import asyncio
import re
import time

from ducklm.models.local.exit_status import Ending
from ducklm.models.local.state import LOCAL_SERVERS, ServerState
from tests.support.scripted_llm import ScriptedLLM
from tests.support.server import Served

CRASH = Ending(pid=1, server_pid=2, exit_code=None, signal="SIGSEGV", ended_at=time.time(),
               requested=False)  # fmt: skip
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"


async def _server_check(served: Served) -> tuple[str, dict[str, object]]:
    health = (await served.client.get("/health")).json()
    (server,) = health["checks"]["model_servers"]
    return health["status"], server


async def test_health_shows_the_restart_then_what_to_do_once_duck_gives_up(
    served: Served, llm: ScriptedLLM
) -> None:
    await asyncio.to_thread(llm.close)
    with LOCAL_SERVERS.kept(llm.base_url, restart_wait_s=60.0, notice_s=1.0) as watch:
        watch.set(ServerState("restarting", CRASH))
        status, server = await _server_check(served)
        assert status == "degraded"
        assert server["ok"] is False
        assert re.fullmatch(
            rf"restarting: it crashed \(SIGSEGV\) at {STAMP}", str(server["detail"])
        )
        assert server["fix"] == "", "DuckLM restarts it: nothing for the person to run"

        watch.set(ServerState("down", CRASH, gave_up="it did not come back"))
        _, server = await _server_check(served)
        assert str(server["detail"]).startswith("down: it crashed (SIGSEGV) at ")
        assert str(server["detail"]).endswith("; it did not come back")
        assert str(server["fix"]).endswith("then start it again: `ducklm llama start`")

    _, server = await _server_check(served)
    assert server["detail"] == "not reachable", "no keeper: the plain check"
