"""Claude on a cloud platform's client of the ``anthropic`` SDK: what Amazon Bedrock
(``bedrock.py``) and Google Vertex AI (``vertex.py``) share.

Everything about a turn is :class:`~jupyter_agent.models.anthropic.AnthropicModel`'s:
the request body encoded once per turn, prompt caching, streaming, the retries of a
stream that broke, Stop closing the connection. What differs is who signs the request
(the platform's credentials instead of an Anthropic key), where it goes (the model moves
into the URL), and how refusals read: a 401 or 403 here is about AWS or Google
credentials and permissions, so it says which credentials, and which region or project.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from typing import Any

from ..errors import ModelError
from ._anthropic_stream import EventStream
from ._base import ModelRequest
from .anthropic import AnthropicModel, error_message

DISTRIBUTION = "jupyter-in-kernel-agent"


class CloudModel(AnthropicModel):
    """A Claude model on a cloud platform (subclassed by BedrockModel and VertexModel)."""

    extra = ""
    """The package extra that installs the SDK's support for the platform."""
    _extra_modules: tuple[str, ...] = ()

    def use_key(self, key: str) -> None:
        raise ValueError(
            f"{self!r} signs its requests with {self.service}'s credentials, not an "
            "Anthropic API key."
        )

    @property
    def key_rejected(self) -> bool:
        return False  # no Anthropic key here: a 401 says which credentials instead

    def _require_extra(self) -> None:
        """Raise a clear error if the SDK's support for the platform is not installed."""
        missing = [m for m in self._extra_modules if not _installed(m)]
        if missing:
            raise self._missing_extra(missing)

    def _missing_extra(self, modules: list[str] | tuple[str, ...]) -> ModelError:
        """The error for the platform's ``modules`` missing: what to pip install."""
        return ModelError(
            f"Claude on {self.service} needs {', '.join(modules)}: "
            f'pip install "{DISTRIBUTION}[{self.extra}]"'
        )

    def _where(self) -> str:
        """Where requests go, for error messages: the region (and project)."""
        raise NotImplementedError

    def _credentials_source(self) -> str | None:
        """Where the credentials come from, in words; None if nothing provides them."""
        raise NotImplementedError

    def _credentials_problem(self, exc: Exception, client: Any) -> str | None:
        """``exc``, raised as ``client`` signed a request, in a sentence if it is the
        platform's credentials failing to load. Told by the exception's type where the
        platform's library raised it; where the SDK raised a plain ``RuntimeError`` (it
        has no type of its own for "no credentials"), by asking the library itself."""
        raise NotImplementedError

    def _refusal(self, status: int, message: str, kind: str | None) -> str:
        """A 401 or 403 in sentences: which credentials, what they may not do."""
        raise NotImplementedError

    async def _open(
        self, client: Any, request: ModelRequest, params: dict[str, Any]
    ) -> EventStream:
        import anthropic

        try:
            return await super()._open(client, request, params)
        except (anthropic.APIError, ModelError):
            raise
        except Exception as exc:
            # The SDK loads and refreshes the credentials as it sends (in a thread), and
            # imports the platform's library then: a failed import is its cause.
            if isinstance(exc.__cause__, ImportError):
                raise self._missing_extra(self._extra_modules) from exc
            problem = self._credentials_problem(exc, client)
            if problem is None:
                raise
            raise ModelError(problem, error_type="credentials_error") from exc

    def _failed(self, exc: Exception, tries: Any) -> ModelError:
        import anthropic

        if isinstance(exc, anthropic.APIStatusError) and exc.status_code in (401, 403, 404):
            status = exc.status_code
            kind = _error_kind(exc)
            message = error_message(exc)
            if status == 404:
                text = (
                    f"{self.service} does not know model {self.name!r} in {self._where()} "
                    f"(404): {message}. Check the model id and that the model is offered there."
                )
            else:
                text = self._refusal(status, message, kind)
            kinds = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}
            return ModelError(text, status=status, error_type=kinds[status])
        return super()._failed(exc, tries)


@functools.cache
def api_version(platform: str, fallback: str) -> str:
    """The ``anthropic_version`` the SDK's own client for ``platform`` ("bedrock",
    "vertex") puts in the body, so that ours says the same."""
    try:
        module = importlib.import_module(f"anthropic.lib.{platform}._client")
    except ImportError:
        return fallback
    for name in ("DEFAULT_VERSION", "ANTHROPIC_API_VERSION"):
        version = getattr(module, name, None)
        if isinstance(version, str) and version:
            return version
    return fallback


def raised_by(exc: BaseException, *libraries: str) -> bool:
    """Whether ``exc``'s type comes from one of ``libraries`` (top-level package names)."""
    return type(exc).__module__.split(".")[0] in libraries


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing
        return False


def _error_kind(exc: Any) -> str | None:
    """The platform's name for an HTTP error: Bedrock's ``x-amzn-ErrorType`` header
    (``AccessDeniedException:…``), or Google's ``status`` (``PERMISSION_DENIED``)."""
    response = getattr(exc, "response", None)
    header = response.headers.get("x-amzn-errortype") if response is not None else None
    if header:
        return str(header).partition(":")[0]
    body = getattr(exc, "body", None)
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        status = body["error"].get("status") or body["error"].get("type")
        return str(status) if status else None
    return None
