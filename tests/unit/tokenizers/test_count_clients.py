"""The counting-API tokenizers build their SDK clients one way (``APICountTokenizer._client_kwargs``):
the key from the first variable set, the base URL from the argument before the environment,
two retries and two minutes a request, whatever the provider."""

from __future__ import annotations

import pytest

from ctxprobe.errors import CtxprobeError
from ctxprobe.providers.anthropic.count import AnthropicCountTokenizer
from ctxprobe.providers.openai.count import OpenAICountTokenizer
from ctxprobe.tokenizers.api_count import COUNT_RETRIES, COUNT_TIMEOUT_S


@pytest.mark.parametrize("cls, key, url", [(AnthropicCountTokenizer, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
                                            (OpenAICountTokenizer, "OPENAI_API_KEY", "OPENAI_BASE_URL")])
def test_each_client_has_the_shared_retries_timeout_and_url(cls: type, key: str, url: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(key, " sk-test-1 ")
    monkeypatch.setenv(url, "http://127.0.0.1:9/from-env")
    tok = cls("m")
    assert (tok._client.max_retries, tok._client.timeout) == (COUNT_RETRIES, COUNT_TIMEOUT_S) == (2, 120.0)
    assert tok._client.api_key == "sk-test-1" == tok._secret
    assert str(tok._client.base_url).startswith("http://127.0.0.1:9/from-env")
    # the argument wins over the environment; an empty variable is the SDK's own URL
    assert str(cls("m", base_url="http://127.0.0.1:9/arg")._client.base_url).startswith("http://127.0.0.1:9/arg")
    monkeypatch.setenv(url, "  ")
    assert "127.0.0.1" not in str(cls("m")._client.base_url)


def test_gemini_takes_the_same_settings_in_its_own_units(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.genai")
    from ctxprobe.providers.gemini.count import GeminiCountTokenizer

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")  # the second name, when the first is unset
    monkeypatch.setenv("GEMINI_BASE_URL", "http://127.0.0.1:9/g")
    tok = GeminiCountTokenizer("gemini-x")
    assert tok._secret == "g-key"
    http = tok._client._api_client._http_options
    assert (http.timeout, http.retry_options.attempts) == (120_000, COUNT_RETRIES + 1)
    assert str(http.base_url).startswith("http://127.0.0.1:9/g")


def test_no_key_is_one_line_naming_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    with pytest.raises(CtxprobeError, match="openai-count:m needs an API key: set OPENAI_API_KEY"):
        OpenAICountTokenizer("m")
