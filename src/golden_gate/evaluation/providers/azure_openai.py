"""Azure OpenAI: the OpenAI SDK's Azure client; the model is the deployment name."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golden_gate.evaluation.providers.openai import OpenAICompatible

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


PROVIDER = AzureOpenAI(
    name="azure_openai",
    title="Azure OpenAI",
    key_env=("AZURE_OPENAI_API_KEY",),
    endpoint_env=("AZURE_OPENAI_ENDPOINT",),
)
