"""The one reader of the model servers' wire, on chunks and completions as servers send them.

Each sample is shaped after what the named server sends (its documentation or its
source): llama-server (`--reasoning-format deepseek`, `timings`, usage in a last chunk
with no choices), Ollama's OpenAI endpoint (`reasoning`, whole tool calls), vLLM with and
without a reasoning parser, OpenRouter (`reasoning`, cached tokens).
"""

from __future__ import annotations

from typing import Any

import pytest

from ducklm.models.think_tags import HOLD_MAX_CHARS
from ducklm.models.wire import PromptRead, WireReader, prompt_read


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> dict:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
            "model": "m", "choices": choices, **top}  # fmt: skip


def read_stream(chunks: list[dict[str, Any]], *, opened: bool | None = False) -> dict[str, Any]:
    """Every chunk through one reader: the answer, reasoning, tool pieces and the end.

    `streamed`: the answer as it went out before the stream's end, piece by piece.
    """
    reader = WireReader(opened=opened)
    answer, reasoning, calls, streamed = "", "", [], []
    for raw in chunks:
        read, thought = reader.chunk(raw)
        assert "usage" not in read and "timings" not in read, "held back for the end"
        reasoning += thought
        for choice in read["choices"]:
            answer += choice["delta"].get("content") or ""
            calls += choice["delta"].get("tool_calls") or []
        streamed.append(answer)
    held, usage, prompt = reader.end()
    return {
        "answer": answer + held.answer,
        "reasoning": reasoning + held.reasoning,
        "calls": calls,
        "usage": usage,
        "prompt": prompt,
        "orphan": reader.orphan_close,
        "streamed": streamed,
        "template_opens": reader.template_opens,
        "reasoned": reader.reasoned,
    }


def test_llama_server_reasoning_content_timings_and_usage_without_choices() -> None:
    usage = {"prompt_tokens": 32, "completion_tokens": 3, "total_tokens": 35,
             "prompt_tokens_details": {"cached_tokens": 31}}  # fmt: skip
    timings = {"prompt_n": 1, "cache_n": 31, "predicted_n": 3}
    read = read_stream([
        chunk({"role": "assistant", "content": None}),
        chunk({"reasoning_content": "The user "}),
        chunk({"reasoning_content": "greets."}),
        chunk({"content": "Hello"}),
        chunk({}, "stop", timings=timings),
        chunk(None, usage=usage, timings=timings),
    ])  # fmt: skip
    assert (read["answer"], read["reasoning"]) == ("Hello", "The user greets.")
    assert read["usage"] == usage
    assert read["prompt"] == PromptRead(32, "timings")


def test_ollama_reasoning_field_and_a_whole_tool_call_without_index() -> None:
    read = read_stream([
        chunk({"role": "assistant", "content": "", "reasoning": "Need the file."}),
        chunk({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_x1", "type": "function",
             "function": {"name": "file_read", "arguments": '{"path": "a.md"}'}}]}),
        chunk({"role": "assistant", "content": ""}, "tool_calls"),
        chunk(None, usage={"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}),
    ])  # fmt: skip
    assert read["reasoning"] == "Need the file."
    [call] = read["calls"]
    assert call["index"] == 0 and call["id"] == "call_x1"
    assert call["function"] == {"name": "file_read", "arguments": '{"path": "a.md"}'}
    assert read["prompt"] == PromptRead(120, "usage")


@pytest.mark.parametrize(
    "pieces",
    [
        ["<think>", "Let me see.", "</think>", "\n\nThe answer."],
        ["<thi", "nk>Let me", " see.</th", "ink>\n", "\nThe answer."],  # tags split
        ["\n<thinking>Let me see.</thinking>The answer."],  # the other tag, after a newline
    ],
)
def test_inline_reasoning_leaves_the_answer(pieces: list[str]) -> None:
    read = read_stream([chunk({"content": piece}) for piece in pieces])
    assert read["answer"] == "The answer."
    assert read["reasoning"].strip() == "Let me see."


def test_reasoning_left_open_at_the_end_stays_reasoning() -> None:
    read = read_stream([chunk({"content": "<think>"}), chunk({"content": "thinking on"})])
    assert (read["answer"], read["reasoning"]) == ("", "thinking on")


def test_a_tag_later_in_the_answer_is_part_of_the_answer() -> None:
    text = "Use <think> tags like <think>this</think>."
    assert read_stream([chunk({"content": text})])["answer"] == text


def test_a_closing_tag_alone_is_learned_and_next_time_read_as_reasoning() -> None:
    """A template that opens `<think>` in the prompt (DeepSeek-R1 distills, QwQ on vLLM)."""
    first = read_stream([chunk({"content": "I think.</think>"}), chunk({"content": "\n\nHi"})])
    assert first["orphan"]
    after = read_stream([chunk({"content": "Hmm.</thi"}), chunk({"content": "nk>\n\nHi"})],
                        opened=True)  # fmt: skip
    assert (after["answer"], after["reasoning"]) == ("Hi", "Hmm.")
    # A reply that never closes the tag the prompt opened was answer after all.
    plain = read_stream([chunk({"content": "Just hi."})], opened=True)
    assert plain["answer"] == "Just hi."


def test_a_first_reply_is_held_until_a_closing_tag_tells_the_template_opened_it() -> None:
    """Not known yet (a model's first reply): its reasoning never goes out as answer."""
    pieces = ["Let me ", "think it over.", "</th", "ink>", "\n\nForty", "-two."]
    first = read_stream([chunk({"content": p}) for p in pieces], opened=None)
    assert first["streamed"][:4] == ["", "", "", ""], "nothing went out as answer before"
    assert (first["answer"], first["reasoning"]) == ("Forty-two.", "Let me think it over.")
    assert first["template_opens"] is True and first["reasoned"]


def test_a_first_reply_that_closes_no_tag_is_answer_given_back_in_order() -> None:
    plain = read_stream([chunk({"content": p}) for p in ["Just ", "hi ", "there."]], opened=None)
    assert plain["streamed"] == ["", "", ""] and plain["answer"] == "Just hi there."
    assert plain["reasoning"] == "" and plain["template_opens"] is False
    tagged = read_stream([chunk({"content": "<think>Hm.</think>Hi."})], opened=None)
    assert (tagged["answer"], tagged["template_opens"]) == ("Hi.", False)
    # An answer that talks about the tags is an answer.
    talk = read_stream([chunk({"content": "Models write <think>...</think> first."})], opened=None)
    assert talk["answer"] == "Models write <think>...</think> first." and not talk["reasoning"]


def test_a_first_reply_past_the_bound_goes_out_as_answer() -> None:
    long = "word " * (HOLD_MAX_CHARS // 5 + 1)
    read = read_stream([chunk({"content": long}), chunk({"content": "end."})], opened=None)
    assert read["streamed"][0] == long, "released once past the bound, not at the end"
    assert read["answer"] == long + "end." and read["template_opens"] is None


def test_reasoning_in_a_field_releases_a_first_reply_at_once() -> None:
    """A server that parts reasoning itself sends answer text only: nothing is held."""
    chunks = [chunk({"reasoning_content": "Hm."}), chunk({"content": "Hi"}),
              chunk({"content": " there."})]  # fmt: skip
    read = read_stream(chunks, opened=None)
    assert read["streamed"] == ["", "Hi", "Hi there."] and read["template_opens"] is False
    late = [chunk({"content": "Hi"}), chunk({"reasoning": "Hm."}), chunk({"content": " there."})]
    read = read_stream(late, opened=None)
    assert read["streamed"] == ["", "", "Hi there."] and read["reasoning"] == "Hm."


def test_a_whole_completion_with_a_closing_tag_alone() -> None:
    reader = WireReader()
    message = {"role": "assistant", "content": "Ponder.</think>\n\nForty-two."}
    raw = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    read, reasoning = reader.completion(raw)
    assert read["choices"][0]["message"]["content"] == "Forty-two."
    assert reasoning == "Ponder." and reader.orphan_close


def test_vllm_reasoning_parser_fields_in_a_completion() -> None:
    for field in ("reasoning_content", "reasoning"):
        message = {"role": "assistant", "content": "{}", field: "Plan the JSON."}
        raw = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        read, reasoning = WireReader().completion(raw)
        assert reasoning == "Plan the JSON."
        assert field not in read["choices"][0]["message"]
        assert read["choices"][0]["message"]["content"] == "{}"


def test_tool_calls_in_pieces_several_at_once_and_without_ids() -> None:
    read = read_stream([
        chunk({"tool_calls": [{"index": 0, "function": {"name": "a", "arguments": ""}},
                              {"index": 1, "function": {"name": "b", "arguments": '{"x"'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": ": 1}"}}]}),
    ])  # fmt: skip
    first, second, more_a, more_b = read["calls"]
    assert (first["index"], second["index"], more_a["index"], more_b["index"]) == (0, 1, 0, 1)
    assert first["id"] and second["id"] and first["id"] != second["id"], "ids given"
    assert more_a["id"] is None and more_b["id"] is None, "pieces are not new calls"


def piece(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    """A chunk with one tool-call piece at index 0."""
    function = {"arguments": arguments} if name is None else {"name": name, "arguments": arguments}
    return chunk({"tool_calls": [{"index": 0, "id": call_id, "function": function}]})


def test_two_calls_sent_under_one_index_stay_two() -> None:
    read = read_stream([piece("c1", "a", "{}"), piece("c2", "b", "{}")])
    assert [(c["index"], c["id"]) for c in read["calls"]] == [(0, "c1"), (1, "c2")]


def test_a_name_repeated_in_every_piece_is_not_doubled() -> None:
    read = read_stream([piece("c1", "a", "{"), piece(None, "a", "}")])
    assert "name" not in read["calls"][1]["function"]


def test_usage_repeated_in_every_chunk_is_said_once() -> None:
    read = read_stream([
        chunk({"content": "a"}, usage={"prompt_tokens": 900, "completion_tokens": 1}),
        chunk({"content": "b"}, usage={"prompt_tokens": 900, "completion_tokens": 2}),
    ])  # fmt: skip
    assert read["usage"] == {"prompt_tokens": 900, "completion_tokens": 2}
    assert read["prompt"] == PromptRead(900, "usage")


@pytest.mark.parametrize(
    ("usage", "timings", "expected"),
    [
        (None, None, PromptRead(None)),  # no usage at all
        ({"prompt_tokens": 0, "completion_tokens": 5}, None, PromptRead(None)),  # 0 says nothing
        ({"prompt_tokens": 1500}, None, PromptRead(1500, "usage")),
        # counted only what the cache missed, and said how much it held
        ({"prompt_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1460}}, None,
         PromptRead(1500, "usage")),
        # the whole, and how much of it was cached (llama-server, vLLM, OpenAI)
        ({"prompt_tokens": 1500, "prompt_tokens_details": {"cached_tokens": 1460}}, None,
         PromptRead(1500, "usage")),
        # timings are the whole prompt, whatever usage says
        ({"prompt_tokens": 40}, {"prompt_n": 40, "cache_n": 1460}, PromptRead(1500, "timings")),
        ({"prompt_tokens": 40}, {"prompt_n": 40}, PromptRead(40, "usage")),  # prompt_n alone: not
    ],
)  # fmt: skip
def test_what_a_reply_says_of_the_prompt(usage: Any, timings: Any, expected: PromptRead) -> None:
    assert prompt_read(usage, timings) == expected


def test_the_truncated_flag_is_kept_from_any_chunk() -> None:
    read = read_stream([chunk({"content": "x"}, truncated=True), chunk({}, "stop")])
    assert read["prompt"].truncated
    assert PromptRead.of({"prompt_read": read["prompt"].as_metadata()}) == read["prompt"]
