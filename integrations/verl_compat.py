"""verl's tool types, or minimal stand-ins when verl is not installed.

With verl installed, BaseTool, ToolResponse and OpenAIFunctionToolSchema are
verl's own (verl/tools/base_tool.py, verl/tools/schemas.py). Without it, the
stand-ins below have the same constructor, attributes and method signatures
as verl's current BaseTool (checked by integrations/tests/test_verl_tool.py
against the signatures recorded in VERL_SIGNATURES):

    create(self, instance_id: Optional[str] = None, **kwargs) -> tuple[str, ToolResponse]
    execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]
    calc_reward(self, instance_id: str, **kwargs) -> float
    release(self, instance_id: str, **kwargs) -> None

All four are coroutines. verl before mid-2025 returned (str, float, dict)
from execute and a bare str from create; this package targets the current
form (ToolResponse), which verl's ToolAgentLoop reads as `.text`.
"""

from typing import Any, Optional
from uuid import uuid4

# Recorded from verl/tools/base_tool.py (verl-project/verl, 2025-2026).
VERL_SIGNATURES = {
    "__init__": "(self, config: dict, tool_schema: OpenAIFunctionToolSchema)",
    "create": "(self, instance_id: Optional[str] = None, **kwargs) -> tuple[str, ToolResponse]",
    "execute": "(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]",
    "calc_reward": "(self, instance_id: str, **kwargs) -> float",
    "release": "(self, instance_id: str, **kwargs) -> None",
}

try:  # pragma: no cover - exercised only where verl is installed
    from verl.tools.base_tool import BaseTool  # noqa: F401
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse  # noqa: F401

    HAVE_VERL = True
except ImportError:
    HAVE_VERL = False

    class ToolResponse:
        """Stand-in for verl.tools.schemas.ToolResponse (text, image, video)."""

        def __init__(self, text: Optional[str] = None, image: Optional[list] = None, video: Optional[list] = None):
            if image is not None and not isinstance(image, list):
                raise ValueError(f"Image must be a list, but got {type(image)}")
            if video is not None and not isinstance(video, list):
                raise ValueError(f"Video must be a list, but got {type(video)}")
            self.text, self.image, self.video = text, image, video

        def is_empty(self) -> bool:
            return not self.text and not self.image and not self.video

        def is_text_only(self) -> bool:
            return bool(self.text) and not self.image and not self.video

        def __repr__(self):
            return f"ToolResponse(text={self.text!r})"

    class _Function:
        def __init__(self, d):
            if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not isinstance(d.get("description"), str):
                raise ValueError("tool_schema.function needs a string name and description")
            self.name = d["name"]
            self.description = d["description"]
            self.parameters = d.get("parameters", {"type": "object", "properties": {}, "required": []})
            self.strict = bool(d.get("strict", False))

    class OpenAIFunctionToolSchema:
        """Stand-in for verl.tools.schemas.OpenAIFunctionToolSchema: {"type", "function": {"name", "description", "parameters"}}."""

        def __init__(self, type: str, function: dict):
            self.type = type
            self.function = _Function(function)
            self._raw = {"type": type, "function": dict(function)}

        @classmethod
        def model_validate(cls, d):
            if isinstance(d, cls):
                return d
            if not isinstance(d, dict) or "type" not in d or "function" not in d:
                raise ValueError("tool_schema needs keys type and function")
            return cls(d["type"], d["function"])

        def model_dump(self, **kwargs):
            return {"type": self.type, "function": dict(self._raw["function"])}

    class BaseTool:
        """Stand-in for verl.tools.base_tool.BaseTool (same signatures)."""

        def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
            self.config = config
            self.tool_schema = tool_schema or self.get_openai_tool_schema()
            assert self.tool_schema is not None, "Tool schema is not set!"
            self.name = self.tool_schema.function.name

        def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
            return self.tool_schema

        async def create(self, instance_id: Optional[str] = None, **kwargs) -> tuple[str, ToolResponse]:
            return (instance_id if instance_id is not None else str(uuid4())), ToolResponse()

        async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
            return ToolResponse(text="Updated the tool state."), 0.0, {}

        async def calc_reward(self, instance_id: str, **kwargs) -> float:
            return 0.0

        async def release(self, instance_id: str, **kwargs) -> None:
            pass
