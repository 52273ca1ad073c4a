"""Agent settings: one pydantic model per agent kind, validated at the config's edge.

They live beside the agents that read them (agents/registry.py builds an agent from its
settings), below the experiment config, which only names agents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Fields of an agent that change how fast or through which door we go, not what it says.
# Prices change what a run costs, not what it says.
TRANSPORT_FIELDS = {
    "api_key_env",
    "timeout_s",
    "max_concurrency",
    "headers",
    "threads",
    "price_in_usd_per_mtok",
    "price_out_usd_per_mtok",
}


class OpenAIAgentConfig(_Strict):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, Ollama, ...)."""

    kind: Literal["openai"]
    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding the API key"
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="request fields sent as given (temperature, max_tokens, ...); "
        "unset ones are left to the provider's defaults",
    )
    headers: dict[str, str] = Field(default_factory=dict)
    display_name: str | None = None
    timeout_s: float = Field(default=480.0, gt=0)
    max_concurrency: int | None = Field(
        default=None, ge=1, description="calls in flight to this model at most (per model)"
    )
    price_in_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million prompt tokens (unset: from /models)"
    )
    price_out_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million completion tokens"
    )
    sees_images: bool | None = Field(
        default=None,
        description="send attached images as OpenAI-style image parts (unset: yes); false for "
        "a text-only model, which then gets an [image] marker per image",
    )


class _TextOnly(_Strict):
    """An agent kind that is given text only: an image reaches it as an "[image]" marker."""

    @model_validator(mode="before")
    @classmethod
    def _no_images(cls, data: Any) -> Any:
        if isinstance(data, dict) and "sees_images" in data:
            if data["sees_images"] is True:
                raise ValueError(
                    f"sees_images: a {data.get('kind')!r} agent is given text only (each image "
                    "becomes an [image] marker); only kind 'openai' agents can receive images"
                )
            data = {k: v for k, v in data.items() if k != "sees_images"}
        return data


class LocalAgentConfig(_TextOnly):
    """A GGUF model run in-process by llama.cpp: an embedded model name or a file path."""

    kind: Literal["local"]
    model: str = Field(description="'smollm2', 'gemma3-base', or a path to a .gguf file")
    mode: Literal["chat", "completion"] | None = Field(
        default=None, description="chat template, or a dialogue-transcript prompt for base models"
    )
    max_tokens: int = Field(default=96, ge=1)
    temperature: float = Field(default=0.7, ge=0)
    top_p: float = Field(default=0.95, gt=0, le=1)
    n_ctx: int = Field(default=2048, ge=256)
    system_prompt: str | None = None
    threads: int | None = Field(default=None, ge=1)


class ElizaAgentConfig(_TextOnly):
    """Weizenbaum's ELIZA with the DOCTOR script (1966)."""

    kind: Literal["eliza"]
    case: Literal["upper", "sentence"] = "upper"


class ScriptedAgentConfig(_TextOnly):
    """Fixed replies in order (for tests, or to replay a recorded side of a conversation)."""

    kind: Literal["scripted"]
    replies: list[str] = Field(default_factory=list)
    replies_file: Path | None = Field(
        default=None,
        description="replies to replay: a .txt file (one per line) or a .json list of strings "
        "or of {role, content} messages (an exported history; its assistant turns are replayed)",
    )
    cycle: bool = False
    fallback: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> ScriptedAgentConfig:
        if self.replies and self.replies_file:
            raise ValueError("give either replies or replies_file, not both")
        return self


class VisionBaselineAgentConfig(_Strict):
    """An offline, clearly labelled baseline for colour estimation and object detection
    (agents/vision_baseline.py): pixel statistics, no model and no endpoint."""

    kind: Literal["vision-baseline"]
    objects: list[str] | None = Field(
        default=None,
        description="three words to answer every object-detection image with (e.g. the three "
        "most frequent object words of the human answers); unset: words from image statistics",
    )

    @model_validator(mode="after")
    def _three_words(self) -> VisionBaselineAgentConfig:
        words = [w.lower() for w in self.objects or []]
        if self.objects is not None and (
            len(set(words)) != 3 or not all(w.isalpha() for w in words)
        ):
            raise ValueError("objects: give three different one-word answers (letters only)")
        return self


AgentConfig = Annotated[
    OpenAIAgentConfig
    | LocalAgentConfig
    | ElizaAgentConfig
    | ScriptedAgentConfig
    | VisionBaselineAgentConfig,
    Field(discriminator="kind"),
]

# Usable in any config without declaring them: nothing to download, no key.
EMBEDDED_AGENTS: dict[str, AgentConfig] = {
    "eliza": ElizaAgentConfig(kind="eliza"),
    "smollm2": LocalAgentConfig(kind="local", model="smollm2", mode="chat"),
    "gemma3-base": LocalAgentConfig(kind="local", model="gemma3-base", mode="completion"),
    "vision-baseline": VisionBaselineAgentConfig(kind="vision-baseline"),
}
