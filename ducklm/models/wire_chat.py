"""`ChatOpenAI` that reads every reply through DuckLM's one wire reader (`ducklm.models.wire`).

langchain-openai builds its messages from the OpenAI wire as OpenAI sends it: it drops
`reasoning_content` and `reasoning`, leaves `<think>` tags in the answer, drops tool
calls without an `index`, and adds up usage a server repeats in every chunk. Here each
completion and each chunk goes through a `WireReader` first, so the messages every role
gets have the answer's text alone, the reasoning in `additional_kwargs["reasoning_content"]`,
numbered tool calls, and what the server read of the prompt in `response_metadata`
(`PROMPT_KEY`, said once, in a last chunk of its own).

A stream's reader is found by the chunk converter through a context variable: the
converter is called once per chunk by langchain-openai's `_astream` loop, with no way to
pass it anything, and a client serves many conversations at once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from ducklm.models.wire import PROMPT_KEY, REASONING_KEY, SEEN_KEY, WireReader

_READING: ContextVar[WireReader | None] = ContextVar("ducklm_wire_reading", default=None)


class WireReadingChat(ChatOpenAI):
    """`ChatOpenAI` whose replies are read by `WireReader`, whatever server sent them."""

    _opens_think: bool | None = PrivateAttr(default=None)
    """The model's chat template opens `<think>` in the prompt: learned from its replies,
    None until one tells (its first streamed text is held back until then)."""

    def know_template(self, opens: bool) -> None:
        """What the server rendered of the chat template (`Capabilities.template_opens`).

        Taken only while the replies have not told: a model switched on the same server
        may have another template, and its replies are the better word.
        """
        if self._opens_think is None:
            self._opens_think = opens

    def _reader(self) -> WireReader:
        return WireReader(opened=self._opens_think)

    def _learn(self, reader: WireReader) -> None:
        if (opens := reader.template_opens) is not None:
            self._opens_think = opens

    def _create_chat_result(
        self,
        response: dict[str, Any] | openai.BaseModel,
        generation_info: dict[str, Any] | None = None,
    ) -> ChatResult:
        raw = response if isinstance(response, dict) else response.model_dump()
        reader = self._reader()
        read, reasoning = reader.completion(raw)
        self._learn(reader)
        result = super()._create_chat_result(read, generation_info)
        seen = {"usage_asked": False, "usage": reader.usage_said, "reasoning": bool(reasoning)}
        for generation in result.generations:
            if reasoning:
                generation.message.additional_kwargs[REASONING_KEY] = reasoning
            generation.message.response_metadata[PROMPT_KEY] = reader.prompt().as_metadata()
            generation.message.response_metadata[SEEN_KEY] = seen
        return result

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if "response_format" in kwargs:
            # JSON for DuckLM, never shown: read whole. (langchain-openai would stream it
            # through the openai library's own parser, around the reader.)
            kwargs.pop("stream_usage", None)
            result = await self._agenerate(messages, stop, run_manager, **kwargs)
            whole = _as_chunk(result)
            if run_manager:
                await run_manager.on_llm_new_token(whole.text, chunk=whole)
            yield whole
            return
        reader = self._reader()
        outer = _READING.get()
        _READING.set(reader)
        try:
            async for generation in super()._astream(messages, stop, run_manager, **kwargs):
                yield generation
        finally:
            _READING.set(outer)
        last = self._last_chunk(reader)
        self._learn(reader)  # after the end: a text held to its end told it opens no tag
        others = {k: v for k, v in kwargs.items() if k != "stream_usage"}
        asked = self._should_stream_usage(kwargs.get("stream_usage"), **others)
        last.message.response_metadata[SEEN_KEY] = {
            "usage_asked": asked, "usage": reader.usage_said, "reasoning": reader.reasoned
        }  # fmt: skip
        if run_manager:
            await run_manager.on_llm_new_token(last.text, chunk=last)
        yield last

    def _convert_chunk_to_generation_chunk(
        self,
        chunk: dict[str, Any],
        default_chunk_class: type,
        base_generation_info: dict[str, Any] | None,
    ) -> ChatGenerationChunk | None:
        reader = _READING.get() or WireReader()
        read, reasoning = reader.chunk(chunk)
        if not read["choices"]:
            return None  # usage and timings: said by the last chunk
        generation = super()._convert_chunk_to_generation_chunk(
            read, default_chunk_class, base_generation_info
        )
        if generation is not None and reasoning:
            generation.message.additional_kwargs[REASONING_KEY] = reasoning
        return generation

    def _last_chunk(self, reader: WireReader) -> ChatGenerationChunk:
        """The stream's end: text held back, and the usage and prompt read, once."""
        held, usage, prompt = reader.end()
        raw: dict[str, Any] = {"choices": [{"index": 0, "delta": {"content": held.answer}}]}
        if usage:
            raw["usage"] = usage
        generation = super()._convert_chunk_to_generation_chunk(raw, AIMessageChunk, {})
        if generation is None:  # not for a chunk with a delta; for the type checker
            generation = ChatGenerationChunk(message=AIMessageChunk(content=held.answer))
        if held.reasoning:
            generation.message.additional_kwargs[REASONING_KEY] = held.reasoning
        generation.message.response_metadata[PROMPT_KEY] = prompt.as_metadata()
        return generation


def _as_chunk(result: ChatResult) -> ChatGenerationChunk:
    """A whole reply as the one chunk of a stream."""
    generation = result.generations[0]
    message = generation.message
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    usage = message.usage_metadata if isinstance(message, AIMessage) else None
    chunk = AIMessageChunk(
        content=message.content,
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        usage_metadata=usage,
        id=message.id,
        tool_call_chunks=[
            tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=n)
            for n, c in enumerate(calls)
        ],
    )
    return ChatGenerationChunk(message=chunk, generation_info=generation.generation_info)
