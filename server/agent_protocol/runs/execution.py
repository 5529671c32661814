"""A run of this door is a task of the server's hub, run by DuckLM's runner.

So it has what every run has, whichever door started it: task and run rows, an audit
log (`ducklm events`), one run per thread, cancel through `POST /v1/tasks/{id}/cancel`,
recovery after a crash, a conversation the web chat lists. The door adds only what its
wire needs: the graph's `values` / `updates` / `messages` / `debug` chunks and, for mode
`events`, LangChain's events of the graph's run, which the runner hands to the task's
`LiveTask` beside DuckLM's events (`GraphOptions.watch`). The graph's run then has the
door's run id, so `events` name the root run as the LangGraph server's do. On
PostgreSQL the run's stream goes to another worker that asks for it (`runs/relay.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.runs.spec import RunSpec
from ducklm.server.agent_protocol.streaming.events import graph_modes
from ducklm.server.tasks import LiveTask, TaskHub

Forget = Callable[[str], Awaitable[None]]
"""Forgets what the door keeps of a thread (by its id)."""


async def start_run(
    spec: RunSpec, duck: DuckLM, hub: TaskHub, *, forget: Forget | None = None
) -> LiveTask:
    """Start `spec` as a hub task; it runs to its end whatever its clients do.

    `forget`: what else of a thread-less run's thread goes at its end (the door's rows).

    Raises:
        ThreadBusy: The thread runs, or a new message meets a task waiting for an answer.
    """

    def run(live: LiveTask) -> AsyncIterator[Event]:
        options = replace(
            spec.options,
            watch=live.publish_chunk,
            watch_modes=graph_modes(spec.stream_modes),
            watch_events="events" in spec.stream_modes,
            callback_run_id=spec.options.metadata.get("run_id"),
        )
        critic, memory = spec.critic is not False, spec.memory is not False
        if spec.answer is not None:
            command = spec.command
            events = duck.answer(
                spec.thread_id,
                spec.answer,
                critic=spec.critic,
                memory=spec.memory,
                update=command.update if command else None,
                goto=command.goto if command else (),
                options=options,
            )
        elif spec.values is not None:
            events = duck.stream_values(
                spec.values,
                thread_id=spec.thread_id,
                message=spec.message,
                critic=critic,
                memory=memory,
                options=options,
            )
        else:
            events = duck.stream_command(
                spec.thread_id, spec.command, critic=critic, memory=memory, options=options
            )
        if not spec.temporary:
            return events
        return _then_forget(events, duck, spec.thread_id, forget)

    return await hub.launch(spec.thread_id, run, new_turn=spec.values is not None)


async def _then_forget(
    events: AsyncIterator[Event], duck: DuckLM, thread_id: str, forget: Forget | None
) -> AsyncIterator[Event]:
    """A thread-less run's events; its thread (conversation, records) goes at the end."""
    try:
        async for item in events:
            yield item
    finally:
        # Shielded: a cancelled run must not leave its temporary thread behind.
        await asyncio.shield(duck.forget_thread(thread_id))
        if forget is not None:
            await asyncio.shield(forget(thread_id))
