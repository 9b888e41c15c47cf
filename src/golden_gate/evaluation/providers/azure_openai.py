"""Azure OpenAI: the OpenAI SDK's Azure client; the model is the deployment name.

Its endpoints, API versions and Entra ID tokens are the SDK's to resolve: the judge posts
through the client LangChain's model built (with the same body as for OpenAI), not its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers import base
from golden_gate.evaluation.providers.openai import OpenAICompatible, langchain_asks

if TYPE_CHECKING:
    from golden_gate.evaluation.judge import JudgeSettings

# OPENAI_API_VERSION overrides this one: the first GA version with json_schema structured
# output, which openevals asks for.
DEFAULT_API_VERSION = "2024-10-21"


@dataclass(frozen=True)
class AzureOpenAI(OpenAICompatible):
    def model_kwargs(self, settings: JudgeSettings) -> dict[str, Any]:
        kwargs = super().model_kwargs(settings)
        kwargs["model_provider"] = self.name
        kwargs["api_version"] = os.environ.get("OPENAI_API_VERSION") or DEFAULT_API_VERSION
        # The resource endpoint; else the SDK reads AZURE_OPENAI_ENDPOINT.
        if (endpoint := kwargs.pop("base_url", None)) is not None:
            kwargs["azure_endpoint"] = endpoint
        return kwargs

    def chat_endpoint(self, model: str, settings: JudgeSettings) -> base.ChatEndpoint | None:
        if langchain_asks(model):
            return None
        import httpx2

        chat_model, http = self.build(model, settings)
        sdk = chat_model.root_async_client

        async def post(body: dict[str, Any]) -> Any:
            # The SDK's own retries are off (base.model_kwargs): the judge's apply.
            return await sdk.post("/chat/completions", body=body, cast_to=httpx2.Response)

        return base.ChatEndpoint(
            post=post,
            url=str(sdk.base_url),
            http_client=http,
            # As the model's validators left them.
            model=chat_model.model_name,
            temperature=chat_model.temperature,
            max_tokens=chat_model.max_tokens,
            seed=chat_model.seed,
            cap_field=self.cap_field,
        )


PROVIDER = AzureOpenAI(
    name="azure_openai",
    title="Azure OpenAI",
    key_env=("AZURE_OPENAI_API_KEY",),
    endpoint_env=("AZURE_OPENAI_ENDPOINT",),
)
