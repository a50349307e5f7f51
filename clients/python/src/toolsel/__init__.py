"""A Python client for the toolsel HTTP API (standard library only, Python 3.9+).

toolsel picks, out of a large tool library, the few tools an agent needs for an instruction. This
module talks to a running ``toolsel serve``; it is one file with no dependencies, so it can be
installed (``pip install ./clients/python``) or copied into a project as ``toolsel.py``.

Method names are snake_case; what goes over the wire is exactly the service's JSON (camelCase
fields such as ``toolFormat``, ``toolIds``), and answers are returned as the service sent them
(plain dicts and lists; the TypedDicts below describe them for type checkers).

Example::

    from toolsel import ToolselClient, ToolselError

    toolsel = ToolselClient("http://localhost:8080")          # or TOOLSEL_URL / TOOLSEL_API_KEY
    answer = toolsel.select("email Ann the weather in Paris")
    print([tool["id"] for tool in answer["tools"]])            # ['weather.get_weather_forecast', ...]
    tools = toolsel.select_openai_tools("text Bob that I am late")   # for openai's tools=
    print(tools.tool_ids)                                      # {'sms--send_sms': 'sms.send_sms'}

Errors are :class:`ToolselError`: the service's ``{"error": {"code", "message"}}`` with the HTTP
status, or a client-side code (``CLIENT_TIMEOUT``, ``NETWORK``, ``BAD_RESPONSE``). Like the
TypeScript client, it never retries by itself.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, TypedDict, Union, cast

__version__ = "0.1.0"

__all__ = [
    "ToolselClient",
    "ToolselError",
    "ToolList",
    "select_openai_tools",
    "select_anthropic_tools",
    "DEFAULT_URL",
    "DEFAULT_TIMEOUT",
    "CLIENT_OPERATIONS",
    "__version__",
]

DEFAULT_URL = "http://localhost:8080"
"""Where the client looks when neither ``base_url`` nor ``TOOLSEL_URL`` is given."""
DEFAULT_TIMEOUT = 30.0
"""Seconds, as the TypeScript client's 30000 ms."""

ToolFormat = Literal["toolsel", "openai", "openai-responses", "anthropic"]
ProviderToolFormat = Literal["openai", "openai-responses", "anthropic"]
ClientErrorCode = Literal["CLIENT_TIMEOUT", "NETWORK", "BAD_RESPONSE"]

#: Each method and the operation of ``/openapi.json`` it calls (a test checks every operation has one).
CLIENT_OPERATIONS: Dict[str, str] = {
    "select": "POST /v1/select-tools",
    "search": "POST /v1/search-tools",
    "list_libraries": "GET /v1/libraries",
    "get_library": "GET /v1/libraries/{library}",
    "put_library": "PUT /v1/libraries/{library}",
    "delete_library": "DELETE /v1/libraries/{library}",
    "get_tool": "GET /v1/libraries/{library}/tools/{id}",
    "get_tools": "POST /v1/libraries/{library}/tools/batch",
    "get_provider_tools": "POST /v1/libraries/{library}/tools/batch",
    "add_examples": "POST /v1/libraries/{library}/examples",
    "feedback": "POST /v1/feedback",
    "planner_rewards": "POST /v1/rewards/planner",
    "selector_rewards": "POST /v1/rewards/selector",
    "components": "GET /v1/components",
    "health": "GET /healthz",
    "ready": "GET /readyz",
    "metrics": "GET /metrics",
    "snapshot": "POST /v1/snapshots",
}


# ---------------------------------------------------------------------------------------------
# The answers' shapes (the service's JSON as it is; `/openapi.json` is the full description).
# ---------------------------------------------------------------------------------------------


class _SelectedToolFields(TypedDict):
    id: str
    name: str
    description: str


class SelectedTool(_SelectedToolFields, total=False):
    """A selected tool in toolsel's own shape (``tool_format`` ``toolsel``, the default)."""

    parameters: Dict[str, Any]
    namespace: str


class _CandidateFields(TypedDict):
    id: str
    name: str
    score: float


class Candidate(_CandidateFields, total=False):
    features: Dict[str, float]  # with explain=True


class _StepFields(TypedDict):
    text: str
    candidates: List[Candidate]
    selected: Optional[str]


class Step(_StepFields, total=False):
    whole: bool


class _SelectResponseFields(TypedDict):
    tools: List[Dict[str, Any]]
    steps: List[Step]
    timings: Dict[str, float]
    components: Dict[str, Any]
    usage: Dict[str, int]


class SelectResponse(_SelectResponseFields, total=False):
    """``POST /v1/select-tools``: ``tools`` are :class:`SelectedTool` dicts, or in a provider's
    shape with ``toolIds`` (provider tool name -> tool id) when ``tool_format`` names one."""

    toolIds: Dict[str, str]
    examples: Dict[str, Any]
    warnings: List[str]


class SearchResult(TypedDict):
    id: str
    name: str
    description: str
    score: float


class SearchResponse(TypedDict):
    library: str
    retriever: str
    results: List[SearchResult]


class ProviderTools(TypedDict):
    """Tools in a provider's shape with ``toolIds``: provider tool name -> tool id."""

    tools: List[Dict[str, Any]]
    toolIds: Dict[str, str]


class UsageExample(TypedDict):
    instruction: str
    tools: List[str]


# Libraries, tools, rewards, components and readiness answers are plain dicts as well; see
# `/openapi.json` of the service for every field.
JSONObject = Dict[str, Any]


class ToolselError(Exception):
    """A failed call: the service's error (``{"error": {"code", "message"}}`` of every 4xx/5xx)
    with its HTTP ``status``, or a client-side one for what never got an answer:
    ``CLIENT_TIMEOUT`` (no answer within ``timeout``), ``NETWORK`` (no connection) and
    ``BAD_RESPONSE`` (an answer that is not the service's JSON; ``status`` is set)."""

    def __init__(self, code: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        #: The service's code (``UNKNOWN_LIBRARY``, ``INVALID_INPUT``, ``FORBIDDEN``...) or a client one.
        self.code = code
        #: The error message (the service's own when it answered one).
        self.message = message
        #: The HTTP status; ``None`` when no answer came (timeout, network).
        self.status = status

    def __str__(self) -> str:
        where = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.code}{where}: {self.message}"

    def __repr__(self) -> str:
        return f"ToolselError(code={self.code!r}, message={self.message!r}, status={self.status!r})"


class ToolList(List[Any]):
    """The tools of a select answer in a provider's shape: a plain list (pass it as ``tools=``),
    with ``tool_ids`` (provider tool name -> tool id, to map a model's tool call back) and the
    whole ``answer`` (steps, timings...). Its items are dicts, typed ``Any`` so that a type
    checker takes the list where the SDKs' own tool types are asked for (mypy --strict does)."""

    def __init__(self, tools: Iterable[Any], tool_ids: Dict[str, str], answer: JSONObject):
        super().__init__(tools)
        self.tool_ids = tool_ids
        self.answer = answer

    def tool_id(self, name: str) -> str:
        """The tool id of a provider tool name (``sms--send_sms`` -> ``sms.send_sms``); KeyError
        for a name that is none of these tools'."""
        return self.tool_ids[name]


def _drop_none(fields: Mapping[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def _segment(value: str) -> str:
    """One path segment, percent-encoded as encodeURIComponent does it (``/`` too)."""
    return urllib.parse.quote(value, safe="-_.!~*'()")


class ToolselClient:
    """A client for one toolsel service.

    :param base_url: where the service listens, e.g. ``http://localhost:8080`` (a path prefix is
        kept). Default: ``TOOLSEL_URL``, else ``http://localhost:8080``.
    :param api_key: sent as ``Authorization: Bearer <key>``. Default: ``TOOLSEL_API_KEY`` (none
        when unset or empty). Writes (libraries, examples, feedback, snapshots) need the admin key.
    :param timeout: seconds a request may wait for the connection and for each read of the answer
        (``socket`` timeouts, as urllib has them); ``CLIENT_TIMEOUT`` when exceeded. Default 30.
    :param headers: extra headers for every request.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        url = base_url if base_url is not None else os.environ.get("TOOLSEL_URL") or DEFAULT_URL
        if not url.startswith(("http://", "https://")):
            raise ValueError(
                f"ToolselClient: base_url must be an http(s) URL such as {DEFAULT_URL}, got {url!r}"
            )
        if not timeout > 0:
            raise ValueError(f"ToolselClient: timeout must be a positive number of seconds, got {timeout!r}")
        self.base_url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("TOOLSEL_API_KEY") or None
        self.timeout = timeout
        self.headers = dict(headers or {})

    def __repr__(self) -> str:
        return f"ToolselClient({self.base_url!r})"

    # -- selection ------------------------------------------------------------------------------

    def select(
        self,
        instruction: str,
        *,
        library: Optional[str] = None,
        k: Optional[int] = None,
        tau: Optional[float] = None,
        planner: Optional[str] = None,
        retriever: Optional[str] = None,
        reranker: Optional[str] = None,
        selector: Optional[str] = None,
        include_schemas: Optional[bool] = None,
        explain: Optional[bool] = None,
        tool_format: Optional[ToolFormat] = None,
        timeout: Optional[float] = None,
    ) -> SelectResponse:
        """Plans, retrieves and selects the tools for an instruction (``POST /v1/select-tools``).

        ``tool_format`` ``openai`` / ``openai-responses`` / ``anthropic`` returns the tools as that
        API takes them, with ``toolIds`` (provider tool name -> tool id); ``explain`` adds each
        candidate's ``features``; ``k`` (candidates per step) and ``tau`` (score threshold) tune
        retrieval. Options left ``None`` are not sent (the service's defaults apply).
        """
        body = _drop_none(
            {
                "instruction": instruction,
                "library": library,
                "k": k,
                "tau": tau,
                "planner": planner,
                "retriever": retriever,
                "reranker": reranker,
                "selector": selector,
                "includeSchemas": include_schemas,
                "explain": explain,
                "toolFormat": tool_format,
            }
        )
        return cast(SelectResponse, self._request("POST", "/v1/select-tools", body=body, timeout=timeout))

    def select_tools(self, instruction: str, tool_format: ProviderToolFormat, **options: Any) -> ToolList:
        """The selected tools in a provider's shape as a :class:`ToolList` (a list with
        ``tool_ids`` and ``answer``); ``options`` are :meth:`select`'s."""
        answer = self.select(instruction, tool_format=tool_format, **options)
        return ToolList(answer["tools"], dict(answer.get("toolIds", {})), dict(answer))

    def select_openai_tools(
        self, instruction: str, *, responses_api: bool = False, **options: Any
    ) -> ToolList:
        """The tools for an instruction as the openai SDK's ``tools=`` takes them: Chat
        Completions' ``{"type": "function", "function": {...}}``, or with ``responses_api=True``
        the Responses API's flat ``{"type": "function", "name", ...}``. ``tool_ids`` maps a
        tool call's ``function.name`` back to the tool id."""
        return self.select_tools(instruction, "openai-responses" if responses_api else "openai", **options)

    def select_anthropic_tools(self, instruction: str, **options: Any) -> ToolList:
        """The tools for an instruction as the anthropic SDK's ``tools=`` takes them
        (``{"name", "description", "input_schema"}``); ``tool_ids`` maps a ``tool_use`` block's
        ``name`` back to the tool id."""
        return self.select_tools(instruction, "anthropic", **options)

    def search(
        self,
        query: str,
        *,
        library: Optional[str] = None,
        k: Optional[int] = None,
        retriever: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> SearchResponse:
        """Ranked tools for a query, without planning or selection (``POST /v1/search-tools``):
        ids, names, one-line descriptions and scores, no schemas."""
        body = _drop_none({"query": query, "library": library, "k": k, "retriever": retriever})
        return cast(SearchResponse, self._request("POST", "/v1/search-tools", body=body, timeout=timeout))

    # -- schemas --------------------------------------------------------------------------------

    def get_tools(
        self, library: str, ids: Sequence[str], *, timeout: Optional[float] = None
    ) -> List[JSONObject]:
        """Full definitions (with parameters) of tools by id, in the order asked."""
        path = f"/v1/libraries/{_segment(library)}/tools/batch"
        answer = self._request("POST", path, body={"ids": list(ids)}, timeout=timeout)
        return cast(List[JSONObject], answer["tools"])

    def get_provider_tools(
        self,
        library: str,
        ids: Sequence[str],
        tool_format: ProviderToolFormat,
        *,
        timeout: Optional[float] = None,
    ) -> ProviderTools:
        """Tools by id in the shape a model API takes (``openai``, ``openai-responses``,
        ``anthropic``), in the order asked, with ``toolIds``: provider tool name -> tool id."""
        path = f"/v1/libraries/{_segment(library)}/tools/batch"
        body = {"ids": list(ids), "toolFormat": tool_format}
        return cast(ProviderTools, self._request("POST", path, body=body, timeout=timeout))

    def get_tool(self, library: str, id: str, *, timeout: Optional[float] = None) -> JSONObject:
        """One tool's full definition."""
        path = f"/v1/libraries/{_segment(library)}/tools/{_segment(id)}"
        return cast(JSONObject, self._request("GET", path, timeout=timeout)["tool"])

    # -- libraries ------------------------------------------------------------------------------

    def list_libraries(self, *, timeout: Optional[float] = None) -> List[JSONObject]:
        """The loaded libraries: tool count, content hash, retrievers."""
        return cast(List[JSONObject], self._request("GET", "/v1/libraries", timeout=timeout)["libraries"])

    def get_library(self, name: str, *, timeout: Optional[float] = None) -> JSONObject:
        return self._json("GET", f"/v1/libraries/{_segment(name)}", timeout=timeout)

    def put_library(
        self,
        name: str,
        tools: Union[str, bytes, Sequence[Any], Mapping[str, Any]],
        *,
        format: Optional[str] = None,
        namespace: Optional[str] = None,
        on_duplicate: Optional[Literal["error", "rename", "first", "last"]] = None,
        provider_names: Optional[Literal["decode", "keep"]] = None,
        retriever: Optional[str] = None,
        examples: Optional[Literal["keep", "drop"]] = None,
        rebuild: Optional[bool] = None,
        timeout: Optional[float] = None,
    ) -> JSONObject:
        """Creates or replaces a library (``PUT /v1/libraries/<name>``, admin key) from tools in
        any format the service imports: a ``str`` or ``bytes`` is sent as it is (the contents
        of a JSON, JSON Lines, CSV or OpenAPI YAML file), anything else as JSON. The keywords
        are the upload's query parameters (``on_duplicate`` is ``onDuplicate``...)."""
        query = _drop_none(
            {
                "format": format,
                "namespace": namespace,
                "onDuplicate": on_duplicate,
                "providerNames": provider_names,
                "retriever": retriever,
                "examples": examples,
                "rebuild": None if rebuild is None else ("true" if rebuild else "false"),
            }
        )
        search = f"?{urllib.parse.urlencode(query)}" if query else ""
        if isinstance(tools, str):
            raw = tools.encode("utf-8")
        elif isinstance(tools, (bytes, bytearray)):
            raw = bytes(tools)
        else:
            raw = _json_bytes(tools)
        path = f"/v1/libraries/{_segment(name)}{search}"
        return self._json("PUT", path, raw_body=raw, timeout=timeout)

    def delete_library(self, name: str, *, timeout: Optional[float] = None) -> None:
        """Removes a library and its index (admin key)."""
        self._request("DELETE", f"/v1/libraries/{_segment(name)}", timeout=timeout)

    # -- usage examples and feedback ------------------------------------------------------------

    def add_examples(
        self,
        library: str,
        examples: Sequence[UsageExample],
        *,
        timeout: Optional[float] = None,
    ) -> JSONObject:
        """Adds usage examples ``{"instruction", "tools": [ids]}`` to a library (admin key)."""
        path = f"/v1/libraries/{_segment(library)}/examples"
        return self._json("POST", path, body={"examples": list(examples)}, timeout=timeout)

    def feedback(
        self,
        instruction: str,
        used: Sequence[str],
        *,
        library: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> JSONObject:
        """Records the tools (ids) an agent really called for an instruction (admin key)."""
        body = _drop_none({"instruction": instruction, "library": library, "used": list(used)})
        return self._json("POST", "/v1/feedback", body=body, timeout=timeout)

    # -- rewards --------------------------------------------------------------------------------

    def planner_rewards(
        self,
        instruction: str,
        gold: Sequence[str],
        completions: Sequence[str],
        *,
        library: Optional[str] = None,
        k: Optional[int] = None,
        tau: Optional[float] = None,
        retriever: Optional[str] = None,
        format_penalty: Optional[float] = None,
        timeout: Optional[float] = None,
    ) -> JSONObject:
        """The paper's planner reward of each completion (``POST /v1/rewards/planner``)."""
        body = _drop_none(
            {
                "library": library,
                "instruction": instruction,
                "gold": list(gold),
                "completions": list(completions),
                "k": k,
                "tau": tau,
                "retriever": retriever,
                "formatPenalty": format_penalty,
            }
        )
        return self._json("POST", "/v1/rewards/planner", body=body, timeout=timeout)

    def selector_rewards(
        self,
        gold: Optional[str],
        completions: Sequence[str],
        *,
        candidates: Optional[Sequence[str]] = None,
        timeout: Optional[float] = None,
    ) -> JSONObject:
        """1 for each completion that names the gold tool (``none`` for gold ``None``), else 0."""
        body: Dict[str, Any] = {"gold": gold, "completions": list(completions)}
        if candidates is not None:
            body["candidates"] = list(candidates)
        return self._json("POST", "/v1/rewards/selector", body=body, timeout=timeout)

    # -- service --------------------------------------------------------------------------------

    def components(self, *, timeout: Optional[float] = None) -> JSONObject:
        """The planners, retrievers, rerankers and selectors the service can run, with defaults."""
        return self._json("GET", "/v1/components", timeout=timeout)

    def health(self, *, timeout: Optional[float] = None) -> None:
        """Liveness: returns when the process answers, raises otherwise."""
        self._request("GET", "/healthz", timeout=timeout)

    def ready(self, *, timeout: Optional[float] = None) -> JSONObject:
        """Readiness report (libraries, ``failedIndexes``, ``upstreams``); ``NOT_READY`` (503) before."""
        return self._json("GET", "/readyz", timeout=timeout)

    def metrics(self, *, timeout: Optional[float] = None) -> str:
        """Prometheus metrics as text (a read key when keys are configured)."""
        return cast(str, self._request("GET", "/metrics", timeout=timeout, text=True))

    def snapshot(self, *, timeout: Optional[float] = None) -> JSONObject:
        """Writes a snapshot of every saved library on the server (admin key)."""
        return self._json("POST", "/v1/snapshots", timeout=timeout)

    # -- transport ------------------------------------------------------------------------------

    def _json(self, method: str, path: str, **options: Any) -> JSONObject:
        return cast(JSONObject, self._request(method, path, **options))

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        raw_body: Optional[bytes] = None,
        timeout: Optional[float] = None,
        text: bool = False,
    ) -> Any:
        seconds = self.timeout if timeout is None else timeout
        headers = {
            "accept": "text/plain" if text else "application/json",
            "user-agent": f"toolsel-python/{__version__}",
        }
        headers.update(self.headers)
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        data: Optional[bytes] = None
        if raw_body is not None:
            data = raw_body
            if not any(name.lower() == "content-type" for name in headers):
                looks_json = raw_body.lstrip()[:1] in (b"[", b"{")
                headers["content-type"] = "application/json" if looks_json else "text/plain"
        elif body is not None:
            data = _json_bytes(body)
            headers["content-type"] = "application/json"
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
        where = f"{method} {path}"
        try:
            with urllib.request.urlopen(request, timeout=seconds) as response:
                status = response.status
                payload = response.read()
        except urllib.error.HTTPError as error:
            try:
                payload = error.read()
            except (OSError, http.client.HTTPException) as cause:
                raise self._transport_error(cause, method, path, seconds) from cause
            finally:
                error.close()
            raise _error_from_response(error.code, payload, where) from None
        except (OSError, http.client.HTTPException) as cause:  # URLError and timeouts are OSErrors
            raise self._transport_error(cause, method, path, seconds) from cause
        if text:
            return payload.decode("utf-8", errors="replace")
        if not payload:
            return None
        try:
            return json.loads(payload.decode("utf-8"))
        except ValueError as cause:
            raise ToolselError(
                "BAD_RESPONSE",
                f"{where}: the service answered {status} with a body that is not JSON: {_excerpt(payload)}",
                status,
            ) from cause

    def _transport_error(self, cause: BaseException, method: str, path: str, seconds: float) -> ToolselError:
        reason = cause.reason if isinstance(cause, urllib.error.URLError) else cause
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return ToolselError(
                "CLIENT_TIMEOUT",
                f"{method} {path} took longer than {seconds:g} s; raise timeout or check the service",
            )
        return ToolselError(
            "NETWORK",
            f"{method} {self.base_url}{path} failed: {reason}; is toolsel serving at {self.base_url}?",
        )


def _json_bytes(value: Any) -> bytes:
    # allow_nan=False: NaN and Infinity are not JSON (the service would refuse the body anyway).
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _excerpt(payload: bytes) -> str:
    return payload[:100].decode("utf-8", errors="replace")


def _error_from_response(status: int, payload: bytes, where: str) -> ToolselError:
    try:
        error = json.loads(payload.decode("utf-8")).get("error")
        if (
            isinstance(error, dict)
            and isinstance(error.get("code"), str)
            and isinstance(error.get("message"), str)
        ):
            return ToolselError(error["code"], error["message"], status)
    except (ValueError, AttributeError):
        pass  # not the service's error shape (a proxy's page, say): BAD_RESPONSE below
    return ToolselError(
        "BAD_RESPONSE",
        f"{where}: HTTP {status} without a toolsel error body: {_excerpt(payload)}",
        status,
    )


# ---------------------------------------------------------------------------------------------
# Drop-in helpers with a client from the environment (TOOLSEL_URL, TOOLSEL_API_KEY).
# ---------------------------------------------------------------------------------------------


def select_openai_tools(
    instruction: str, *, client: Optional[ToolselClient] = None, **options: Any
) -> ToolList:
    """``ToolselClient().select_openai_tools(instruction, **options)``: the list the openai SDK's
    ``tools=`` takes (Chat Completions; ``responses_api=True`` for the Responses API), with
    ``tool_ids``. The client comes from ``TOOLSEL_URL`` / ``TOOLSEL_API_KEY`` unless given."""
    return (client or ToolselClient()).select_openai_tools(instruction, **options)


def select_anthropic_tools(
    instruction: str, *, client: Optional[ToolselClient] = None, **options: Any
) -> ToolList:
    """``ToolselClient().select_anthropic_tools(instruction, **options)``: the list the anthropic
    SDK's ``tools=`` takes, with ``tool_ids``."""
    return (client or ToolselClient()).select_anthropic_tools(instruction, **options)
