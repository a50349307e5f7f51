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
status, or a client-side code (``CLIENT_TIMEOUT``, ``NETWORK``, ``BAD_RESPONSE``).
Connections are kept open between calls (keep-alive); a request is sent twice only where the
service cannot have acted on it (a reused connection the service had closed), never otherwise.
"""

from __future__ import annotations

import asyncio
import atexit
import http.client
import json
import os
import select
import socket
import threading
import time
import urllib.parse
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    Union,
    cast,
)

__version__ = "0.1.0"

__all__ = [
    "ToolselClient",
    "ToolselError",
    "ToolList",
    "select_openai_tools",
    "select_anthropic_tools",
    "DEFAULT_URL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_POOL_SIZE",
    "CLIENT_OPERATIONS",
    "__version__",
]

DEFAULT_URL = "http://localhost:8080"
"""Where the client looks when neither ``base_url`` nor ``TOOLSEL_URL`` is given."""
DEFAULT_TIMEOUT = 30.0
"""Seconds, as the TypeScript client's 30000 ms."""
DEFAULT_POOL_SIZE = 4
"""Idle keep-alive connections a client keeps."""

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
        (socket timeouts); ``CLIENT_TIMEOUT`` when exceeded. Default 30.
    :param headers: extra headers for every request.
    :param pool_size: idle keep-alive connections kept for the next calls (one per thread
        calling at once is enough); 0 opens a new connection for every call. Default 4.

    Connections are reused (HTTP keep-alive) and the client is thread-safe; ``close()`` or a
    ``with`` block closes the idle ones.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Optional[Mapping[str, str]] = None,
        pool_size: int = DEFAULT_POOL_SIZE,
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
        if not (isinstance(pool_size, int) and pool_size >= 0):
            raise ValueError(f"ToolselClient: pool_size must be an int >= 0, got {pool_size!r}")
        self.pool_size = pool_size
        self._target = _Target(self.base_url)
        self._lock = threading.Lock()
        self._idle: List[Tuple[http.client.HTTPConnection, float]] = []

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

    def close(self) -> None:
        """Closes the pooled connections; a later call opens a new one. ``with ToolselClient() as
        toolsel:`` closes them on leaving the block."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection, _ in idle:
            connection.close()

    def __enter__(self) -> "ToolselClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

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
        headers, data = _request_headers(self.api_key, self.headers, body, raw_body, text)
        try:
            target = self._target.prefix + path
            status, location, payload = self._exchange(method, target, headers, data, seconds)
        except (OSError, http.client.HTTPException) as cause:  # timeouts and resets are OSErrors
            raise _transport_error(cause, method, path, self.base_url, seconds) from cause
        return _answer(method, path, status, location, payload, text)

    def _exchange(
        self, method: str, target: str, headers: Dict[str, str], data: Optional[bytes], seconds: float
    ) -> Tuple[int, Optional[str], bytes]:
        """One request on a pooled connection (or a new one): status, Location and body.

        A pooled connection the service closed in the meantime is found before it is used (its
        socket reads as closed) and dropped. If one still fails, the request is sent again on a
        new connection once, and only where the service cannot have acted on it: the request
        could not be written whole (the service reads a body to its Content-Length before it
        acts), or a GET got no byte of an answer. A POST, PUT or DELETE written whole is never
        sent twice."""
        for attempt in (1, 2):
            connection, reused = self._checkout(seconds)
            retry = reused and attempt == 1
            try:
                try:
                    connection.request(method, target, body=data, headers=headers)
                except _CONNECTION_LOST:
                    if retry:
                        connection.close()
                        continue
                    raise
                try:
                    response = connection.getresponse()
                except _NO_ANSWER:
                    if retry and method == "GET":
                        connection.close()
                        continue
                    raise
                payload = _read_body(response)
            except BaseException:
                connection.close()
                raise
            self._checkin(connection, response)
            return response.status, response.getheader("location"), payload
        raise AssertionError("unreachable")  # the second attempt returns or raises

    def _checkout(self, seconds: float) -> Tuple[http.client.HTTPConnection, bool]:
        """An idle pooled connection still open (the most recent first), else a new one."""
        now = time.monotonic()
        while True:
            with self._lock:
                if not self._idle:
                    break
                connection, expires = self._idle.pop()
            if expires > now and not _closed_by_peer(connection.sock):
                connection.timeout = seconds
                connection.sock.settimeout(seconds)
                return connection, True
            connection.close()
        target = self._target
        if target.https:
            connection = http.client.HTTPSConnection(target.host, target.port, timeout=seconds)
        else:
            connection = http.client.HTTPConnection(target.host, target.port, timeout=seconds)
        return connection, False

    def _checkin(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        """Back to the pool unless the answer closes it, the pool is full or the client closed."""
        expires = _keep_alive_expiry(response)
        if response.will_close or connection.sock is None or expires is None:
            connection.close()
            return
        with self._lock:
            if len(self._idle) < self.pool_size:
                self._idle.append((connection, expires))
                return
        connection.close()


_CONNECTION_LOST = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
"""What a connection the service closed raises (http.client.RemoteDisconnected is a reset too)."""
_NO_ANSWER = _CONNECTION_LOST + (http.client.BadStatusLine,)
"""What reading an answer raises when none came (a closed connection, or bytes that are none)."""


class _Target:
    """The parts of a base URL a connection needs."""

    def __init__(self, base_url: str) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if not parts.hostname:
            raise ValueError(f"ToolselClient: base_url has no host: {base_url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")


def _request_headers(
    api_key: Optional[str],
    extra: Mapping[str, str],
    body: Any,
    raw_body: Optional[bytes],
    text: bool,
) -> Tuple[Dict[str, str], Optional[bytes]]:
    """The headers and body of a request (both clients)."""
    headers = {
        "accept": "text/plain" if text else "application/json",
        "user-agent": f"toolsel-python/{__version__}",
    }
    headers.update(extra)
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    data: Optional[bytes] = None
    if raw_body is not None:
        data = raw_body
        if not any(name.lower() == "content-type" for name in headers):
            looks_json = raw_body.lstrip()[:1] in (b"[", b"{")
            headers["content-type"] = "application/json" if looks_json else "text/plain"
    elif body is not None:
        data = _json_bytes(body)
        headers["content-type"] = "application/json"
    return headers, data


def _answer(method: str, path: str, status: int, location: Optional[str], payload: bytes, text: bool) -> Any:
    """The value of an answer (both clients): JSON, text, None for an empty body; or the error."""
    where = f"{method} {path}"
    if 300 <= status < 400:
        raise ToolselError(
            "BAD_RESPONSE",
            f"{where}: HTTP {status} redirect to {location or '(no Location)'}; the client does not "
            "follow redirects: point base_url at the service itself",
            status,
        )
    if status >= 400:
        raise _error_from_response(status, payload, where)
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


def _transport_error(
    cause: BaseException, method: str, path: str, base_url: str, seconds: float
) -> ToolselError:
    """CLIENT_TIMEOUT or NETWORK for what got no answer (both clients)."""
    if isinstance(cause, (socket.timeout, TimeoutError, asyncio.TimeoutError)):
        return ToolselError(
            "CLIENT_TIMEOUT",
            f"{method} {path} took longer than {seconds:g} s; raise timeout or check the service",
        )
    return ToolselError(
        "NETWORK",
        f"{method} {base_url}{path} failed: {cause}; is toolsel serving at {base_url}?",
    )


def _read_body(response: http.client.HTTPResponse) -> bytes:
    """The whole body of an answer (the one place the sync client reads one)."""
    return response.read()


def _keep_alive_expiry(response: http.client.HTTPResponse) -> Optional[float]:
    """When an idle connection is to be dropped: a second before the service's own
    ``Keep-Alive: timeout=<s>`` closes it (Node's default is 5 s), else in 4 s; None when the
    service keeps idle connections under 2 s (not worth pooling)."""
    seconds = 5.0
    for part in (response.getheader("keep-alive") or "").split(","):
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == "timeout":
            try:
                seconds = float(value)
            except ValueError:
                pass
    if seconds < 2:
        return None
    return time.monotonic() + seconds - 1


def _closed_by_peer(sock: Optional[socket.socket]) -> bool:
    """Whether an idle connection's socket is readable: the service closed it (or sent what it
    should not have); either way it is not to be used again."""
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):  # no limit on the descriptor's number, unlike select()
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)
    except (OSError, ValueError):
        return True


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
    ``tool_ids``. The client comes from ``TOOLSEL_URL`` / ``TOOLSEL_API_KEY`` unless given (one
    per process, so its connection is reused from call to call)."""
    return (client or _default_client()).select_openai_tools(instruction, **options)


def select_anthropic_tools(
    instruction: str, *, client: Optional[ToolselClient] = None, **options: Any
) -> ToolList:
    """``ToolselClient().select_anthropic_tools(instruction, **options)``: the list the anthropic
    SDK's ``tools=`` takes, with ``tool_ids``."""
    return (client or _default_client()).select_anthropic_tools(instruction, **options)


_default: Optional[Tuple[Tuple[Optional[str], Optional[str]], ToolselClient]] = None
_default_lock = threading.Lock()


def _default_client() -> ToolselClient:
    """The helpers' client: made from TOOLSEL_URL / TOOLSEL_API_KEY, made again when they change."""
    global _default
    environment = (os.environ.get("TOOLSEL_URL"), os.environ.get("TOOLSEL_API_KEY"))
    with _default_lock:
        if _default is not None and _default[0] == environment:
            return _default[1]
        if _default is not None:
            _default[1].close()
        _default = (environment, ToolselClient())
        return _default[1]


@atexit.register
def _close_default_client() -> None:
    if _default is not None:
        _default[1].close()
