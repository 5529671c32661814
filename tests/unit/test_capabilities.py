"""What a model server accepts, read from what it says (`ducklm.models.capabilities`)."""

from __future__ import annotations

import functools
import json
from typing import Any

import httpx
import openai
import pytest

from ducklm.models.capabilities import (
    Capabilities,
    Finding,
    ServerCapabilities,
    changes_for,
    props_findings,
    refusal_of,
    template_opens,
)
from ducklm.models.roles import RoleConfig
from tests.support.server_words import (
    LLAMA_CPP_PYTHON_422,
    OLLAMA_NO_TOOLS,
    VLLM_NO_PARSER,
    llama_server_props,
)

URL = "http://127.0.0.1:8081/v1"


def _refused(status: int, body: Any) -> openai.APIStatusError:
    """The exception the openai client raises for such an answer, as it builds it."""
    request = httpx.Request("POST", f"{URL}/chat/completions")
    response = httpx.Response(status, json=body, request=request)
    error: openai.APIStatusError = _client()._make_status_error_from_response(response)
    return error


@functools.cache
def _client() -> openai.OpenAI:
    return openai.OpenAI(base_url=URL, api_key="x", max_retries=0)  # an SSL context: once


def _role(**fields: Any) -> RoleConfig:
    return RoleConfig(name="action", model="m", base_url=URL, api_key="x", prompt="a.md", **fields)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"object": "error", "message": VLLM_NO_PARSER, "type": "BadRequestError"}),
        (400, {"error": {"message": OLLAMA_NO_TOOLS, "type": "api_error"}}),
    ],
    ids=["vLLM", "Ollama"],
)
def test_a_refusal_of_tools_is_named_in_the_servers_words(status: int, body: Any) -> None:
    feature, finding = refusal_of(_refused(status, body)) or (None, None)
    assert feature == "native_tools"
    assert finding is not None and finding.works is False
    assert (body.get("message") or body["error"]["message"]) in finding.how


def test_llama_cpp_pythons_422_on_a_json_schema_is_a_refused_response_format() -> None:
    feature, finding = refusal_of(_refused(422, json.loads(LLAMA_CPP_PYTHON_422))) or ("", None)
    assert feature == "json_schema"
    assert finding is not None and "response_format.type" in finding.how


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "This model's maximum context length is 4096 tokens."),
        (500, VLLM_NO_PARSER),  # a server error is not a refusal of what was asked
        (401, "Incorrect API key provided for tools."),
    ],
)
def test_other_failures_name_nothing(status: int, message: str) -> None:
    assert refusal_of(_refused(status, {"error": {"message": message}})) is None


def test_props_of_a_template_without_tools_say_no_native_tools() -> None:
    found = props_findings(llama_server_props(tools=False))
    assert found["native_tools"].works is False
    assert "chat_template_caps.supports_tools is false" in found["native_tools"].how
    assert found["props"].works and found["grammar"].works and found["json_schema"].works
    assert props_findings(llama_server_props(tools=True))["native_tools"].works is True
    # An older llama-server without chat_template_caps: tools stay unknown.
    assert "native_tools" not in props_findings({"default_generation_settings": {"n_ctx": 1}})


def test_what_is_found_changes_only_what_the_server_cannot_take() -> None:
    no_tools = Capabilities(URL, found={"native_tools": Finding(False, "refused")})
    assert changes_for(no_tools, _role()) == {"tool_mode": "json"}
    assert changes_for(no_tools, _role(tool_mode="json")) == {}
    no_schema = Capabilities(URL, found={"json_schema": Finding(False, "422")})
    assert changes_for(no_schema, _role()) == {"structured_output": "json_object_schema"}
    assert changes_for(no_schema, _role(structured_output="prompt")) == {}
    assert changes_for(Capabilities(URL), _role()) == {}


def test_learning_keeps_the_first_known_answer_against_an_unknown_one() -> None:
    store = ServerCapabilities()
    assert store.known(URL) is None
    assert store.learn(URL, "native_tools", Finding(False, "refused"))
    assert not store.learn(URL, "native_tools", Finding(False, "refused"))
    store.learn(URL, "native_tools", Finding())
    found = store.known(URL + "/")
    assert found is not None and found.of("native_tools").works is False
    assert "native tool calls: no (refused)" in found.summary()


def test_a_rendered_template_says_whether_it_opens_think() -> None:
    """llama-server's `/apply-template` and vLLM's `/tokenize` of messages (R1 distills)."""
    r1 = "<\uff5cUser\uff5c>DuckLM<\uff5cAssistant\uff5c><think>\n"
    assert template_opens({"prompt": r1}, None) is True
    assert template_opens({"prompt": "<|im_start|>assistant\n"}, None) is False
    strs = ["<\uff5cUser\uff5c>", "Duck", "LM", "<\uff5cAssistant\uff5c>", "<think>", "Ċ"]
    assert template_opens(None, {"token_strs": strs}) is True
    assert template_opens(None, {"token_strs": ["<|im_start|>", "assistant", "Ċ"]}) is False
    assert template_opens(None, {"tokens": [1, 2]}) is None, "a count of text tells nothing"
