"""A Python client for the toolsel HTTP API (standard library only, Python 3.9+).

toolsel picks, out of a large tool library, the few tools an agent needs for an instruction. This
module talks to a running ``toolsel serve``; it is one file with no dependencies, so it can be
installed (``pip install ./clients/python``) or copied into a project as ``toolsel.py``.

Method names are snake_case; what goes over the wire is exactly the service's JSON (camelCase
fields such as ``toolFormat``, ``toolIds``), and answers are returned as the service sent them
(plain dicts and lists; the TypedDicts below, generated from the service's ``/openapi.json``,
describe every one for type checkers).

Example::

    from toolsel import AsyncToolselClient, ToolselClient, ToolselError

    toolsel = ToolselClient("http://localhost:8080")          # or TOOLSEL_URL / TOOLSEL_API_KEY
    answer = toolsel.select("email Ann the weather in Paris")
    print([tool["id"] for tool in answer["tools"]])            # ['weather.get_weather_forecast', ...]
    tools = toolsel.select_openai_tools("text Bob that I am late")   # for openai's tools=
    print(tools.tool_ids)                                      # {'sms--send_sms': 'sms.send_sms'}

    async with AsyncToolselClient() as toolsel:                # the same methods for asyncio
        answer = await toolsel.select("email Ann the weather in Paris")

Errors are :class:`ToolselError`: the service's ``{"error": {"code", "message"}}`` with the HTTP
status, or a client-side code (``CLIENT_TIMEOUT``, ``NETWORK``, ``BAD_RESPONSE``).
Connections are kept open between calls (keep-alive); a request is sent twice only where the
service cannot have acted on it (a reused connection the service had closed), never otherwise.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import http.client
import io
import json
import os
import select
import socket
import ssl
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
    NamedTuple,
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
    "AsyncToolselClient",
    "ToolselError",
    "ToolList",
    "select_openai_tools",
    "select_anthropic_tools",
    "DEFAULT_URL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_POOL_SIZE",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "Verify",
    "CLIENT_OPERATIONS",
    "__version__",
]

DEFAULT_URL = "http://localhost:8080"
"""Where the client looks when neither ``base_url`` nor ``TOOLSEL_URL`` is given."""
DEFAULT_TIMEOUT = 30.0
"""Seconds, as the TypeScript client's 30000 ms."""
_MAX_ERROR_BODY_BYTES = 1024 * 1024
"""The service's error bodies are a code and a message: a larger one is not the service's."""
DEFAULT_POOL_SIZE = 4
"""Idle keep-alive connections a client keeps."""
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""The largest answer body a client reads (bytes; ``max_response_bytes``), as the TypeScript client's."""

ToolFormat = Literal["toolsel", "openai", "openai-responses", "anthropic"]
ProviderToolFormat = Literal["openai", "openai-responses", "anthropic"]
ClientErrorCode = Literal["CLIENT_TIMEOUT", "NETWORK", "BAD_RESPONSE"]
Verify = Union[bool, str, "os.PathLike[str]", ssl.SSLContext]
"""How an ``https://`` service's certificate is checked (``verify=``), as requests and httpx take
it: ``True`` (the system's CAs, and ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set), a CA bundle
file or directory for a private CA, an ``ssl.SSLContext``, or ``False`` (no check at all)."""

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
# The answers' shapes: TypedDicts of the service's /openapi.json (its success answers), written by
# clients/python/scripts/generate_types.py; a test fails when they no longer match the service.
# ---------------------------------------------------------------------------------------------


# BEGIN GENERATED by clients/python/scripts/generate_types.py from /openapi.json: do not edit


class SelectedToolAnnotations(TypedDict, total=False):
    """With the parameters only (includeSchemas): the hints an MCP tool's server declared about it (..."""
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class _SelectedToolFields(TypedDict):
    id: str
    name: str
    description: str


class SelectedTool(_SelectedToolFields, total=False):
    parameters: Dict[str, Any]
    namespace: str
    #: With the parameters only (includeSchemas): the hints an MCP tool's server declared about it (...
    annotations: SelectedToolAnnotations


class OpenAIChatToolFunction(TypedDict):
    name: str
    description: str
    parameters: Dict[str, Any]


class OpenAIChatTool(TypedDict):
    type: Literal["function"]
    function: OpenAIChatToolFunction


class OpenAIResponsesTool(TypedDict):
    type: Literal["function"]
    name: str
    description: str
    parameters: Dict[str, Any]
    strict: Literal[False]


class AnthropicTool(TypedDict):
    name: str
    description: str
    input_schema: Dict[str, Any]


class _CandidateFields(TypedDict):
    id: str
    name: str
    score: float


class Candidate(_CandidateFields, total=False):
    features: Dict[str, float]


class _StepFields(TypedDict):
    text: str
    candidates: List[Candidate]
    selected: Optional[str]


class Step(_StepFields, total=False):
    whole: bool


class SelectResponseTimings(TypedDict):
    planMs: float
    retrieveMs: float
    rerankMs: float
    selectMs: float
    totalMs: float


_FallbackRequired = TypedDict(
    "_FallbackRequired",
    {
        "stage": Literal["planner", "selector"],
        "from": str,
        "to": str,
        "code": str,
        "message": str,
    },
)


_FallbackOptional = TypedDict(
    "_FallbackOptional",
    {
        "status": int,
        "raw": str,
    }, total=False,
)


class Fallback(_FallbackRequired, _FallbackOptional):
    """A planner or selector call that failed, and what stood in for it."""


class SelectResponseComponents(TypedDict):
    library: str
    planner: str
    retriever: str
    reranker: str
    selector: str
    #: Each planner or selector call that failed and what stood in for it (`from`, `to`): the error'...
    fallbacks: List[Fallback]


class SelectResponseUsage(TypedDict):
    inputTokens: float
    outputTokens: float


class _SelectResponseExamplesFields(TypedDict):
    similarity: float
    applied: bool


class SelectResponseExamples(_SelectResponseExamplesFields, total=False):
    """Present when the library has usage examples: the closest example's similarity (0-1) and wheth..."""
    decided: Literal[True]


class _SelectResponseFields(TypedDict):
    tools: List[Dict[str, Any]]
    steps: List[Step]
    timings: SelectResponseTimings
    components: SelectResponseComponents
    usage: SelectResponseUsage


class SelectResponse(_SelectResponseFields, total=False):
    #: With a toolFormat other than toolsel: provider tool name → tool id, for each returned tool (m...
    toolIds: Dict[str, str]
    #: Present when the library has usage examples: the closest example's similarity (0-1) and wheth...
    examples: SelectResponseExamples
    #: Present when the answer left some schemas out: it holds at most 8 MiB of tools with their sch...
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


class ExamplesAdded(TypedDict):
    library: str
    #: New examples added.
    added: float
    #: Examples the library already had (skipped).
    duplicates: float
    #: Oldest examples dropped to stay within library.maxExamples.
    evicted: float
    #: Examples the library holds now.
    examples: float
    #: The examples' version (+1 on every change).
    version: float


class PlannerRewardClaimsItemOption1(TypedDict):
    id: str
    rank: float


class PlannerReward(TypedDict):
    reward: float
    precision: float
    recall: float
    f1: float
    format: Literal["ok", "unparsable"]
    steps: List[str]
    claims: List[Optional[PlannerRewardClaimsItemOption1]]


class PlannerRewards(TypedDict):
    library: str
    retriever: str
    k: float
    rewards: List[PlannerReward]


class SelectorReward(TypedDict):
    reward: Union[Literal[0], Literal[1]]
    answer: str
    valid: bool


class SelectorRewards(TypedDict):
    rewards: List[SelectorReward]


class LibraryExamples(TypedDict):
    count: float
    version: float
    cap: float


class Library(TypedDict):
    name: str
    toolCount: float
    contentHash: str
    createdAt: str
    retrievers: List[str]
    defaultRetriever: str
    persisted: bool
    isDefault: bool
    examples: LibraryExamples


class LibraryList(TypedDict):
    libraries: List[Library]


class LibraryUploadWarningCountsKindsItem(TypedDict):
    #: The warning with names as "…" and numbers as N.
    kind: str
    count: float
    #: How many of them `warnings` lists.
    listed: float


class LibraryUploadWarningCounts(TypedDict):
    """Present when `warnings` left some out: the total and each kind's count."""
    #: How many warnings the import gave.
    total: float
    kinds: List[LibraryUploadWarningCountsKindsItem]


class ImportReportFilesItem(TypedDict):
    file: str
    format: str
    tools: float


class ImportReportCounts(TypedDict):
    renamed: float
    dropped: float
    identical: float
    schemaChanges: float
    invalidSchemas: float
    #: Ids and names holding a control or bidi character (all of them).
    suspiciousIds: float


class _ImportReportDuplicatesItemFields(TypedDict):
    id: str
    action: Literal["renamed", "dropped", "identical"]
    file: str


class ImportReportDuplicatesItem(_ImportReportDuplicatesItemFields, total=False):
    to: str
    record: float


class ImportReportSchemaChangesItem(TypedDict):
    id: str
    changes: List[str]


class ImportReportInvalidSchemasItem(TypedDict):
    id: str
    errors: List[str]


class ImportReportSuspiciousIdsItem(TypedDict):
    #: The tool's id escaped as JSON string text (`ns.rtl\u202etxt.exe`: control, bidi and zero-widt...
    id: str
    #: The tool's position in the library (0-based).
    tool: float
    #: The field that holds the character.
    field: Literal["id", "name"]
    #: The first such character, as `U+202E`.
    codePoint: str
    #: Where it is in the field, in UTF-16 code units.
    index: float


class ImportReport(TypedDict):
    """What the import did: renamed/dropped duplicates, parameters rewritten into JSON Schema, and i..."""
    format: str
    tools: float
    files: List[ImportReportFilesItem]
    counts: ImportReportCounts
    duplicates: List[ImportReportDuplicatesItem]
    schemaChanges: List[ImportReportSchemaChangesItem]
    invalidSchemas: List[ImportReportInvalidSchemasItem]
    #: Tools whose id or name holds a control character, a bidi embedding, override or isolate, or a...
    suspiciousIds: List[ImportReportSuspiciousIdsItem]


_LibraryUploadRequired = TypedDict(
    "_LibraryUploadRequired",
    {
        "name": str,
        "toolCount": float,
        "contentHash": str,
        "createdAt": str,
        "retrievers": List[str],
        "defaultRetriever": str,
        "persisted": bool,
        "isDefault": bool,
        "examples": LibraryExamples,
        "unchanged": bool,
        "warnings": List[str],
        "import": ImportReport,
    },
)


_LibraryUploadOptional = TypedDict(
    "_LibraryUploadOptional",
    {
        "warningCounts": LibraryUploadWarningCounts,
    }, total=False,
)


class LibraryUpload(_LibraryUploadRequired, _LibraryUploadOptional):
    """"""


class _ToolSourceFields(TypedDict):
    format: str


class ToolSource(_ToolSourceFields, total=False):
    """Where the tool was imported from: the importer format, the file's base name, the record (0-ba..."""
    file: str
    record: float
    line: float


class _ToolFields(TypedDict):
    id: str
    name: str
    description: str
    parameters: Dict[str, Any]


class Tool(_ToolFields, total=False):
    namespace: str
    tags: List[str]
    #: Where the tool was imported from: the importer format, the file's base name, the record (0-ba...
    source: ToolSource


class _ToolAnswerFields(TypedDict):
    tool: Dict[str, Any]


class ToolAnswer(_ToolAnswerFields, total=False):
    #: With a toolFormat other than toolsel: provider tool name → tool id, for each returned tool (m...
    toolIds: Dict[str, str]


class _ProviderToolsFields(TypedDict):
    tools: List[Dict[str, Any]]


class ProviderTools(_ProviderToolsFields, total=False):
    #: With a toolFormat other than toolsel: provider tool name → tool id, for each returned tool (m...
    toolIds: Dict[str, str]


class ComponentChoices(TypedDict):
    default: str
    #: Ids usable as they are, e.g. rule, top1, bm25.
    ids: List[str]
    #: Prefixes that take an argument, e.g. llm: (llm:openai:<model>).
    prefixes: List[str]


class Components(TypedDict):
    planners: ComponentChoices
    retrievers: ComponentChoices
    rerankers: ComponentChoices
    selectors: ComponentChoices


class Health(TypedDict):
    status: Literal["ok"]


class FailedIndex(TypedDict):
    name: str
    error: str


class UpstreamStatus(TypedDict):
    name: str
    transport: Literal["stdio", "http"]
    #: URL (without user info; a query shows as ?***), or command line (credential flag values as **...
    target: str
    #: connecting (first connection), connected, slow (last request slow or timed out), reconnecting...
    status: Literal["connecting", "connected", "slow", "reconnecting", "down"]
    tags: List[str]
    #: Tools from the last successful tools/list (kept while down).
    toolCount: float
    #: ISO time of the last successful tools/list.
    lastSyncAt: Optional[str]
    #: Milliseconds the last successful request took.
    lastLatencyMs: Optional[float]
    #: The last failure, with what timed out and which setting.
    lastError: Optional[str]
    #: ISO time the server went down; null while it is up.
    downSince: Optional[str]
    #: Milliseconds it has been down; null while it is up.
    downForMs: Optional[float]
    #: Reconnect attempt (1 = the first) since the server last stayed up gateway.reconnectMaxMs: the...
    attempt: float
    #: Times the server went down since the gateway started (a first connect that failed counts), ea...
    outages: float
    #: ISO time of the next reconnect attempt while down; null otherwise (none is planned).
    nextRetryAt: Optional[str]


class _DegradedModelFields(TypedDict):
    stage: Literal["planner", "selector"]
    component: str
    code: str
    message: str
    since: str
    lastFailure: str
    failures: int


class DegradedModel(_DegradedModelFields, total=False):
    fallback: str
    status: int


class ReadinessFirstSync(TypedDict):
    """Gateway mode: where the first sync stands, over the upstreams the caller may see, as `upstrea..."""
    #: Enabled upstream servers.
    upstreams: int
    #: Upstreams whose first connect attempt is over (connected, slow or down).
    done: int
    #: Upstreams running their first connect attempt (pastSlot of them outside the pool).
    connecting: int
    #: Of connecting: attempts running past gateway.connectSlotMs, which gave their connect slot to...
    pastSlot: int
    #: Upstreams waiting for a connect slot.
    waiting: int
    #: gateway.connectConcurrency: the connect slots.
    connectConcurrency: int


class _ReadinessFields(TypedDict):
    status: Literal["ready"]


class Readiness(_ReadinessFields, total=False):
    #: Loaded libraries. With API keys configured: absent without a key; a key limited to libraries...
    libraries: List[str]
    #: Saved indexes skipped at start-up, or committed later by another process, that failed to load...
    failedIndexes: List[FailedIndex]
    #: Gateway mode: each upstream server's status. With API keys configured: absent without a key;...
    upstreams: List[UpstreamStatus]
    #: Model-backed planners and selectors (`openai:`, `onnx:`) whose latest use failed and fell bac...
    degraded: List[DegradedModel]
    #: Gateway mode: where the first sync stands, over the upstreams the caller may see, as `upstrea...
    firstSync: ReadinessFirstSync


class SnapshotLibrary(TypedDict):
    name: str
    tools: float
    contentHash: str
    indexCreatedAt: str
    retrievers: List[str]
    examples: float


class Snapshot(TypedDict):
    #: Its directory name under library.snapshotDir: toolsel snapshot restore <snapshotDir>/<name>.
    name: str
    format: Literal["toolsel-snapshot"]
    version: float
    createdAt: str
    libraries: List[SnapshotLibrary]


# END GENERATED


class UsageExample(TypedDict):
    instruction: str
    tools: List[str]


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


# ---------------------------------------------------------------------------------------------
# The requests of the API methods, made once for both clients.
# ---------------------------------------------------------------------------------------------


class _Call(NamedTuple):
    """One request of an API method: what both clients send, and which field of the answer
    the method returns (``None``: the whole answer)."""

    method: str
    path: str
    timeout: Optional[float]
    body: Any = None
    raw_body: Optional[bytes] = None
    text: bool = False
    field: Optional[str] = None


def _fields(arguments: Mapping[str, Any], names: str) -> Dict[str, Any]:
    """The JSON fields of a method's ``arguments`` (its ``locals()``): ``names`` lists them,
    ``python_name:wireName`` where the service's name differs. ``None`` is left out; sequences
    go as lists."""
    fields: Dict[str, Any] = {}
    for name in names.split():
        argument, _, wire = name.partition(":")
        value = arguments[argument]
        if value is None:
            continue
        if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            value = list(value)
        fields[wire or argument] = value
    return fields


def _select_call(arguments: Mapping[str, Any]) -> _Call:
    names = "instruction library k tau planner retriever reranker selector"
    names += " include_schemas:includeSchemas explain tool_format:toolFormat"
    return _Call("POST", "/v1/select-tools", arguments["timeout"], body=_fields(arguments, names))


def _search_call(arguments: Mapping[str, Any]) -> _Call:
    body = _fields(arguments, "query library k retriever")
    return _Call("POST", "/v1/search-tools", arguments["timeout"], body=body)


def _library_path(name: str) -> str:
    return f"/v1/libraries/{_segment(name)}"


def _get_tools_call(
    library: str, ids: Sequence[str], tool_format: Optional[str], timeout: Optional[float]
) -> _Call:
    """``get_tools`` (the answer's ``tools``) or, with a tool format, ``get_provider_tools``."""
    path = f"{_library_path(library)}/tools/batch"
    body = _drop_none({"ids": list(ids), "toolFormat": tool_format})
    return _Call("POST", path, timeout, body=body, field=None if tool_format else "tools")


def _get_tool_call(library: str, id: str, timeout: Optional[float]) -> _Call:
    return _Call("GET", f"{_library_path(library)}/tools/{_segment(id)}", timeout, field="tool")


def _put_library_call(arguments: Mapping[str, Any]) -> _Call:
    query = _fields(
        arguments,
        "format namespace on_duplicate:onDuplicate provider_names:providerNames retriever examples",
    )
    rebuild = arguments["rebuild"]
    if rebuild is not None:
        query["rebuild"] = "true" if rebuild else "false"
    search = f"?{urllib.parse.urlencode(query)}" if query else ""
    tools = arguments["tools"]
    if isinstance(tools, str):
        raw = tools.encode("utf-8")
    elif isinstance(tools, (bytes, bytearray)):
        raw = bytes(tools)
    else:
        raw = _json_bytes(tools)
    path = f"{_library_path(arguments['name'])}{search}"
    return _Call("PUT", path, arguments["timeout"], raw_body=raw)


def _add_examples_call(library: str, examples: Sequence[UsageExample], timeout: Optional[float]) -> _Call:
    path = f"{_library_path(library)}/examples"
    return _Call("POST", path, timeout, body={"examples": list(examples)})


def _feedback_call(arguments: Mapping[str, Any]) -> _Call:
    body = _fields(arguments, "instruction library used")
    return _Call("POST", "/v1/feedback", arguments["timeout"], body=body)


def _planner_rewards_call(arguments: Mapping[str, Any]) -> _Call:
    names = "library instruction gold completions k tau retriever format_penalty:formatPenalty"
    return _Call("POST", "/v1/rewards/planner", arguments["timeout"], body=_fields(arguments, names))


def _selector_rewards_call(arguments: Mapping[str, Any]) -> _Call:
    body = {"gold": arguments["gold"], **_fields(arguments, "completions candidates")}
    return _Call("POST", "/v1/rewards/selector", arguments["timeout"], body=body)


def _tool_list(answer: SelectResponse) -> ToolList:
    return ToolList(answer["tools"], dict(answer.get("toolIds", {})), dict(answer))


def _openai_format(responses_api: bool) -> ProviderToolFormat:
    return "openai-responses" if responses_api else "openai"


def _configure(
    client: Union["ToolselClient", "AsyncToolselClient"],
    base_url: Optional[str],
    api_key: Optional[str],
    timeout: float,
    headers: Optional[Mapping[str, str]],
    pool_size: int,
    verify: Verify,
) -> None:
    """Checks and sets the settings both clients share."""
    who = type(client).__name__
    url = base_url if base_url is not None else os.environ.get("TOOLSEL_URL") or DEFAULT_URL
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{who}: base_url must be an http(s) URL such as {DEFAULT_URL}, got {url!r}")
    if not timeout > 0:
        raise ValueError(f"{who}: timeout must be a positive number of seconds, got {timeout!r}")
    if not (isinstance(pool_size, int) and pool_size >= 0):
        raise ValueError(f"{who}: pool_size must be an int >= 0, got {pool_size!r}")
    client.base_url = url.rstrip("/")
    client.api_key = _api_key(api_key if api_key is not None else os.environ.get("TOOLSEL_API_KEY"), who)
    client.timeout = timeout
    client.headers = dict(headers or {})
    client.pool_size = pool_size
    client._target = _Target(client.base_url)
    # Made once: a default context loads the system's CAs. Checked for http:// too (a typo in a
    # CA path fails here, not at the first https:// URL), but only https:// connections use it.
    context = _ssl_context(verify, who) if client._target.https or verify is not True else None
    client._ssl = context if client._target.https else None


def _api_key(key: Optional[str], who: str) -> Optional[str]:
    """``key`` as sent: surrounding spaces and line breaks dropped (as fetch drops them from a
    header, and a key read from a file ends in one); a key with any other character outside
    visible ASCII is refused here, not quoted in http.client's ``Invalid header value`` error."""
    if key is None:
        return None
    key = key.strip(" \t\r\n")
    if any(not "!" <= character <= "~" for character in key):
        raise ValueError(
            f"{who}: api_key holds a character an Authorization header can't carry (a space, a line"
            " break, a letter beyond ASCII): API keys are visible ASCII (the key is not shown)"
        )
    return key or None


def _ssl_context(verify: Verify, who: str) -> ssl.SSLContext:
    """The TLS context of ``verify=`` (see :data:`Verify`)."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is True:
        return ssl.create_default_context()
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if isinstance(verify, (str, os.PathLike)):
        path = os.fspath(verify)
        if os.path.isdir(path):
            return ssl.create_default_context(capath=path)
        if os.path.isfile(path):
            try:
                return ssl.create_default_context(cafile=path)
            except ssl.SSLError as error:
                raise ValueError(f"{who}: verify={path!r} holds no PEM certificate: {error}") from error
        raise ValueError(f"{who}: verify={path!r} is no CA bundle file or directory")
    raise ValueError(
        f"{who}: verify must be True, False, a CA bundle path or an ssl.SSLContext, got {verify!r}"
    )


class ToolselClient:
    """A client for one toolsel service.

    :param base_url: where the service listens, e.g. ``http://localhost:8080`` (a path prefix is
        kept). Default: ``TOOLSEL_URL``, else ``http://localhost:8080``.
    :param api_key: sent as ``Authorization: Bearer <key>``. Default: ``TOOLSEL_API_KEY`` (none
        when unset or empty). Writes (libraries, examples, feedback, snapshots) need the admin key.
    :param timeout: seconds a request may wait for the connection (a socket timeout), and the
        most its answer, status line, headers and body, may take from the request's start (an
        answer that drips is cut); ``CLIENT_TIMEOUT`` when exceeded. Default 30.
    :param headers: extra headers for every request.
    :param max_response_bytes: the most bytes of an answer's body the client reads (an error's
        body: at most 1 MiB); a larger one, or one whose Content-Length says so, is
        ``BAD_RESPONSE``, not read further. Default 64 MiB.
    :param pool_size: idle keep-alive connections kept for the next calls (one per thread
        calling at once is enough); 0 opens a new connection for every call. Default 4.
    :param verify: how an ``https://`` service's certificate is checked, as in requests and httpx:
        ``True`` (default: the system's CAs, or ``SSL_CERT_FILE``), the path of a CA bundle (a
        private CA's PEM file, or a directory), an ``ssl.SSLContext``, or ``False`` (none: anyone
        on the path can read the API key). A certificate not trusted is ``NETWORK``.

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
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        verify: Verify = True,
    ) -> None:
        _configure(self, base_url, api_key, timeout, headers, pool_size, verify)
        if not (isinstance(max_response_bytes, int) and max_response_bytes > 0):
            raise ValueError(
                f"ToolselClient: max_response_bytes must be an int > 0, got {max_response_bytes!r}"
            )
        self.max_response_bytes = max_response_bytes
        self._lock = threading.Lock()
        self._idle: List[Tuple[http.client.HTTPConnection, float]] = []

    base_url: str
    api_key: Optional[str]
    timeout: float
    headers: Dict[str, str]
    pool_size: int
    _target: "_Target"
    _ssl: Optional[ssl.SSLContext]

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
        return cast(SelectResponse, self._request(_select_call(locals())))

    def select_tools(self, instruction: str, tool_format: ProviderToolFormat, **options: Any) -> ToolList:
        """The selected tools in a provider's shape as a :class:`ToolList` (a list with
        ``tool_ids`` and ``answer``); ``options`` are :meth:`select`'s."""
        return _tool_list(self.select(instruction, tool_format=tool_format, **options))

    def select_openai_tools(
        self, instruction: str, *, responses_api: bool = False, **options: Any
    ) -> ToolList:
        """The tools for an instruction as the openai SDK's ``tools=`` takes them: Chat
        Completions' ``{"type": "function", "function": {...}}``, or with ``responses_api=True``
        the Responses API's flat ``{"type": "function", "name", ...}``. ``tool_ids`` maps a
        tool call's ``function.name`` back to the tool id."""
        return self.select_tools(instruction, _openai_format(responses_api), **options)

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
        return cast(SearchResponse, self._request(_search_call(locals())))

    # -- schemas --------------------------------------------------------------------------------

    def get_tools(
        self, library: str, ids: Sequence[str], *, timeout: Optional[float] = None
    ) -> List[Tool]:
        """Full definitions (with parameters) of tools by id, in the order asked."""
        return cast(List[Tool], self._request(_get_tools_call(library, ids, None, timeout)))

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
        return cast(ProviderTools, self._request(_get_tools_call(library, ids, tool_format, timeout)))

    def get_tool(self, library: str, id: str, *, timeout: Optional[float] = None) -> Tool:
        """One tool's full definition."""
        return cast(Tool, self._request(_get_tool_call(library, id, timeout)))

    # -- libraries ------------------------------------------------------------------------------

    def list_libraries(self, *, timeout: Optional[float] = None) -> List[Library]:
        """The loaded libraries: tool count, content hash, retrievers."""
        call = _Call("GET", "/v1/libraries", timeout, field="libraries")
        return cast(List[Library], self._request(call))

    def get_library(self, name: str, *, timeout: Optional[float] = None) -> Library:
        """One library: tool count, content hash, retrievers, examples."""
        return cast(Library, self._request(_Call("GET", _library_path(name), timeout)))

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
    ) -> LibraryUpload:
        """Creates or replaces a library (``PUT /v1/libraries/<name>``, admin key) from tools in
        any format the service imports: a ``str`` or ``bytes`` is sent as it is (the contents
        of a JSON, JSON Lines, CSV or OpenAPI YAML file), anything else as JSON. The keywords
        are the upload's query parameters (``on_duplicate`` is ``onDuplicate``...)."""
        return cast(LibraryUpload, self._request(_put_library_call(locals())))

    def delete_library(self, name: str, *, timeout: Optional[float] = None) -> None:
        """Removes a library and its index (admin key)."""
        self._request(_Call("DELETE", _library_path(name), timeout))

    # -- usage examples and feedback ------------------------------------------------------------

    def add_examples(
        self,
        library: str,
        examples: Sequence[UsageExample],
        *,
        timeout: Optional[float] = None,
    ) -> ExamplesAdded:
        """Adds usage examples ``{"instruction", "tools": [ids]}`` to a library (admin key)."""
        return cast(ExamplesAdded, self._request(_add_examples_call(library, examples, timeout)))

    def feedback(
        self,
        instruction: str,
        used: Sequence[str],
        *,
        library: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> ExamplesAdded:
        """Records the tools (ids) an agent really called for an instruction (admin key)."""
        return cast(ExamplesAdded, self._request(_feedback_call(locals())))

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
    ) -> PlannerRewards:
        """The paper's planner reward of each completion (``POST /v1/rewards/planner``)."""
        return cast(PlannerRewards, self._request(_planner_rewards_call(locals())))

    def selector_rewards(
        self,
        gold: Optional[str],
        completions: Sequence[str],
        *,
        candidates: Optional[Sequence[str]] = None,
        timeout: Optional[float] = None,
    ) -> SelectorRewards:
        """1 for each completion that names the gold tool (``none`` for gold ``None``), else 0."""
        return cast(SelectorRewards, self._request(_selector_rewards_call(locals())))

    # -- service --------------------------------------------------------------------------------

    def components(self, *, timeout: Optional[float] = None) -> Components:
        """The planners, retrievers, rerankers and selectors the service can run, with defaults."""
        return cast(Components, self._request(_Call("GET", "/v1/components", timeout)))

    def health(self, *, timeout: Optional[float] = None) -> None:
        """Liveness: returns when the process answers, raises otherwise."""
        self._request(_Call("GET", "/healthz", timeout))

    def ready(self, *, timeout: Optional[float] = None) -> Readiness:
        """Readiness report (libraries, ``failedIndexes``, ``degraded``, ``upstreams``); ``NOT_READY`` (503) before."""
        return cast(Readiness, self._request(_Call("GET", "/readyz", timeout)))

    def metrics(self, *, timeout: Optional[float] = None) -> str:
        """Prometheus metrics as text (a read key when keys are configured)."""
        return cast(str, self._request(_Call("GET", "/metrics", timeout, text=True)))

    def snapshot(self, *, timeout: Optional[float] = None) -> Snapshot:
        """Writes a snapshot of every saved library on the server (admin key)."""
        return cast(Snapshot, self._request(_Call("POST", "/v1/snapshots", timeout)))

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

    def _request(self, call: _Call) -> Any:
        seconds = self.timeout if call.timeout is None else call.timeout
        headers, data = _request_headers(self.api_key, self.headers, call)
        try:
            target = self._target.prefix + call.path
            status, location, payload = self._exchange(call.method, target, headers, data, seconds)
        except (OSError, http.client.HTTPException) as cause:  # timeouts and resets are OSErrors
            raise _transport_error(cause, call, self.base_url, seconds) from cause
        return _answer(call, status, location, payload)

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
        deadline = time.monotonic() + seconds
        for attempt in (1, 2):
            connection, reused = self._checkout(seconds)
            retry = reused and attempt == 1
            try:
                try:
                    # The answer's reads, its headers too, end by the deadline (a dripping server).
                    answer_by_deadline = functools.partial(_Response, deadline=deadline)
                    connection.response_class = answer_by_deadline  # type: ignore[assignment]
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
                payload = _read_body(response, self.max_response_bytes, deadline, f"{method} {target}")
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
            connection = http.client.HTTPSConnection(
                target.host, target.port, timeout=seconds, context=self._ssl
            )
        else:
            connection = http.client.HTTPConnection(target.host, target.port, timeout=seconds)
        return connection, False

    def _checkin(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        """Back to the pool unless the answer closes it, the pool is full or the client closed."""
        expires = _keep_alive_expiry(response.getheader("keep-alive"))
        if response.will_close or connection.sock is None or expires is None:
            connection.close()
            return
        with self._lock:
            if len(self._idle) < self.pool_size:
                self._idle.append((connection, expires))
                return
        connection.close()


class AsyncToolselClient:
    """The client for asyncio: :class:`ToolselClient`'s methods as coroutines (``await
    toolsel.select(...)``), the same arguments, answers and :class:`ToolselError`\\ s.

    Standard library only: HTTP/1.1 on asyncio streams, with keep-alive connections (one pool
    per client, for the event loop that made them). ``timeout`` (seconds) bounds each call as a
    whole, connection included (``CLIENT_TIMEOUT``); a call cancelled or out of time closes its
    connection. A reused connection that fails is tried once more on a new one only for a
    ``GET`` that got no byte of an answer; any other request is never sent twice. Close it with
    ``await toolsel.close()`` or ``async with AsyncToolselClient() as toolsel:``.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Optional[Mapping[str, str]] = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        verify: Verify = True,
    ) -> None:
        _configure(self, base_url, api_key, timeout, headers, pool_size, verify)
        if not (isinstance(max_response_bytes, int) and max_response_bytes > 0):
            raise ValueError(
                f"AsyncToolselClient: max_response_bytes must be an int > 0, got {max_response_bytes!r}"
            )
        self.max_response_bytes = max_response_bytes
        self._idle: List[Tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None  # the event loop of the pooled connections

    base_url: str
    api_key: Optional[str]
    timeout: float
    headers: Dict[str, str]
    pool_size: int
    _target: "_Target"
    _ssl: Optional[ssl.SSLContext]

    def __repr__(self) -> str:
        return f"AsyncToolselClient({self.base_url!r})"

    # -- selection ------------------------------------------------------------------------------

    async def select(
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
        """As :meth:`ToolselClient.select`."""
        return cast(SelectResponse, await self._request(_select_call(locals())))

    async def select_tools(
        self, instruction: str, tool_format: ProviderToolFormat, **options: Any
    ) -> ToolList:
        """As :meth:`ToolselClient.select_tools`."""
        return _tool_list(await self.select(instruction, tool_format=tool_format, **options))

    async def select_openai_tools(
        self, instruction: str, *, responses_api: bool = False, **options: Any
    ) -> ToolList:
        """As :meth:`ToolselClient.select_openai_tools`."""
        return await self.select_tools(instruction, _openai_format(responses_api), **options)

    async def select_anthropic_tools(self, instruction: str, **options: Any) -> ToolList:
        """As :meth:`ToolselClient.select_anthropic_tools`."""
        return await self.select_tools(instruction, "anthropic", **options)

    async def search(
        self,
        query: str,
        *,
        library: Optional[str] = None,
        k: Optional[int] = None,
        retriever: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> SearchResponse:
        """As :meth:`ToolselClient.search`."""
        return cast(SearchResponse, await self._request(_search_call(locals())))

    # -- schemas --------------------------------------------------------------------------------

    async def get_tools(
        self, library: str, ids: Sequence[str], *, timeout: Optional[float] = None
    ) -> List[Tool]:
        """As :meth:`ToolselClient.get_tools`."""
        return cast(List[Tool], await self._request(_get_tools_call(library, ids, None, timeout)))

    async def get_provider_tools(
        self,
        library: str,
        ids: Sequence[str],
        tool_format: ProviderToolFormat,
        *,
        timeout: Optional[float] = None,
    ) -> ProviderTools:
        """As :meth:`ToolselClient.get_provider_tools`."""
        return cast(ProviderTools, await self._request(_get_tools_call(library, ids, tool_format, timeout)))

    async def get_tool(self, library: str, id: str, *, timeout: Optional[float] = None) -> Tool:
        """As :meth:`ToolselClient.get_tool`."""
        return cast(Tool, await self._request(_get_tool_call(library, id, timeout)))

    # -- libraries ------------------------------------------------------------------------------

    async def list_libraries(self, *, timeout: Optional[float] = None) -> List[Library]:
        """As :meth:`ToolselClient.list_libraries`."""
        call = _Call("GET", "/v1/libraries", timeout, field="libraries")
        return cast(List[Library], await self._request(call))

    async def get_library(self, name: str, *, timeout: Optional[float] = None) -> Library:
        """As :meth:`ToolselClient.get_library`."""
        return cast(Library, await self._request(_Call("GET", _library_path(name), timeout)))

    async def put_library(
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
    ) -> LibraryUpload:
        """As :meth:`ToolselClient.put_library`."""
        return cast(LibraryUpload, await self._request(_put_library_call(locals())))

    async def delete_library(self, name: str, *, timeout: Optional[float] = None) -> None:
        """As :meth:`ToolselClient.delete_library`."""
        await self._request(_Call("DELETE", _library_path(name), timeout))

    # -- usage examples and feedback ------------------------------------------------------------

    async def add_examples(
        self,
        library: str,
        examples: Sequence[UsageExample],
        *,
        timeout: Optional[float] = None,
    ) -> ExamplesAdded:
        """As :meth:`ToolselClient.add_examples`."""
        return cast(ExamplesAdded, await self._request(_add_examples_call(library, examples, timeout)))

    async def feedback(
        self,
        instruction: str,
        used: Sequence[str],
        *,
        library: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> ExamplesAdded:
        """As :meth:`ToolselClient.feedback`."""
        return cast(ExamplesAdded, await self._request(_feedback_call(locals())))

    # -- rewards --------------------------------------------------------------------------------

    async def planner_rewards(
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
    ) -> PlannerRewards:
        """As :meth:`ToolselClient.planner_rewards`."""
        return cast(PlannerRewards, await self._request(_planner_rewards_call(locals())))

    async def selector_rewards(
        self,
        gold: Optional[str],
        completions: Sequence[str],
        *,
        candidates: Optional[Sequence[str]] = None,
        timeout: Optional[float] = None,
    ) -> SelectorRewards:
        """As :meth:`ToolselClient.selector_rewards`."""
        return cast(SelectorRewards, await self._request(_selector_rewards_call(locals())))

    # -- service --------------------------------------------------------------------------------

    async def components(self, *, timeout: Optional[float] = None) -> Components:
        """As :meth:`ToolselClient.components`."""
        return cast(Components, await self._request(_Call("GET", "/v1/components", timeout)))

    async def health(self, *, timeout: Optional[float] = None) -> None:
        """As :meth:`ToolselClient.health`."""
        await self._request(_Call("GET", "/healthz", timeout))

    async def ready(self, *, timeout: Optional[float] = None) -> Readiness:
        """As :meth:`ToolselClient.ready`."""
        return cast(Readiness, await self._request(_Call("GET", "/readyz", timeout)))

    async def metrics(self, *, timeout: Optional[float] = None) -> str:
        """As :meth:`ToolselClient.metrics`."""
        return cast(str, await self._request(_Call("GET", "/metrics", timeout, text=True)))

    async def snapshot(self, *, timeout: Optional[float] = None) -> Snapshot:
        """As :meth:`ToolselClient.snapshot`."""
        return cast(Snapshot, await self._request(_Call("POST", "/v1/snapshots", timeout)))

    # -- transport ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Closes the pooled connections; a later call opens a new one."""
        idle, self._idle = self._idle, []
        for _, writer, _ in idle:
            if self._loop is asyncio.get_running_loop():
                await _close_stream(writer)
            elif self._loop is not None:
                _drop_stream(writer, self._loop)

    async def __aenter__(self) -> "AsyncToolselClient":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    async def _request(self, call: _Call) -> Any:
        seconds = self.timeout if call.timeout is None else call.timeout
        headers, data = _request_headers(self.api_key, self.headers, call)
        head = _request_head(call.method, self._target, self._target.prefix + call.path, headers, data)
        exchange = self._exchange(call.method, head, data)
        try:
            status, location, payload = await asyncio.wait_for(exchange, seconds)
        except (OSError, EOFError, asyncio.TimeoutError, http.client.HTTPException) as cause:
            raise _transport_error(cause, call, self.base_url, seconds) from cause
        return _answer(call, status, location, payload)

    async def _exchange(
        self, method: str, head: bytes, data: Optional[bytes]
    ) -> Tuple[int, Optional[str], bytes]:
        """One request on a pooled connection (or a new one): status, Location and body. A
        reused connection the service closed is dropped before use; one that fails anyway is
        tried again on a new connection only for a GET without a byte of answer."""
        for attempt in (1, 2):
            reader, writer, reused = await self._checkout()
            try:
                try:
                    writer.write(head + (data or b""))
                    await writer.drain()
                    line = await reader.readline()
                    if not line:
                        raise http.client.RemoteDisconnected("the connection closed without an answer")
                except _NO_ANSWER:
                    if reused and attempt == 1 and method == "GET":
                        await _close_stream(writer)
                        continue
                    raise
                status, headers = await _read_async_head(reader, line)
                limit = self.max_response_bytes
                payload, keep = await _read_async_body(reader, method, status, headers, limit)
            except BaseException:  # cancelled or out of time too: the connection is in no known state
                writer.close()
                raise
            expires = _keep_alive_expiry(headers.get("keep-alive"))
            if keep and expires is not None and len(self._idle) < self.pool_size:
                self._idle.append((reader, writer, expires))
            else:
                await _close_stream(writer)
            return status, headers.get("location"), payload
        raise AssertionError("unreachable")  # the second attempt returns or raises

    async def _checkout(self) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter, bool]:
        """An idle pooled connection still open (the most recent first), else a new one. The
        pool belongs to one event loop: under another (a second ``asyncio.run``) it is dropped."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            for _, writer, _ in self._idle:
                _drop_stream(writer, cast(asyncio.AbstractEventLoop, self._loop))
            self._idle, self._loop = [], loop
        now = time.monotonic()
        while self._idle:
            reader, writer, expires = self._idle.pop()
            if expires > now and not reader.at_eof() and not writer.is_closing():
                return reader, writer, True
            await _close_stream(writer)
        target = self._target
        reader, writer = await asyncio.open_connection(
            target.host, target.port, ssl=self._ssl, limit=_LINE_LIMIT
        )
        return reader, writer, False


_LINE_LIMIT = 65536
"""The longest status or header line the async client reads (as http.client's 65536)."""
_MAX_HEADERS = 100
"""The most header lines of an answer (as http.client's)."""


def _request_head(
    method: str, target: _Target, path: str, headers: Mapping[str, str], data: Optional[bytes]
) -> bytes:
    """The request line and headers, as http.client writes them (the async client)."""
    host = f"[{target.host}]" if ":" in target.host else target.host
    if target.port != (443 if target.https else 80):
        host = f"{host}:{target.port}"
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Accept-Encoding: identity"]
    for name, value in headers.items():
        if any(character in f"{name}{value}" for character in "\r\n\0"):
            raise ValueError(f"invalid header {name!r}: no CR, LF or NUL in a header")
        lines.append(f"{name}: {value}")
    if data is not None or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(data or b'')}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_async_head(reader: asyncio.StreamReader, line: bytes) -> Tuple[int, Dict[str, str]]:
    """The status and headers (lowercase names) of an answer whose first line is ``line``;
    1xx answers are passed over."""
    while True:
        version, _, rest = line.decode("latin-1").rstrip("\r\n").partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not (code.isdigit() and len(code) == 3):
            raise http.client.BadStatusLine(line.decode("latin-1"))
        headers: Dict[str, str] = {"http-version": version}
        for _ in range(_MAX_HEADERS + 1):
            header = await _read_line(reader)
            if header in (b"\r\n", b"\n"):
                break
            name, colon, value = header.decode("latin-1").partition(":")
            if not colon:
                raise http.client.HTTPException(f"a header line without a colon: {header[:100]!r}")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        else:
            raise http.client.HTTPException(f"more than {_MAX_HEADERS} headers")
        if not 100 <= int(code) < 200:
            return int(code), headers
        line = await _read_line(reader)


async def _read_async_body(
    reader: asyncio.StreamReader, method: str, status: int, headers: Mapping[str, str], limit: int
) -> Tuple[bytes, bool]:
    """The body of an answer, at most ``limit`` bytes (an error's: 1 MiB at most, as the sync
    client's), and whether the connection may serve another request (the one place the async
    client reads a body)."""
    if status >= 400:
        limit = min(limit, _MAX_ERROR_BODY_BYTES)
    connection = headers.get("connection", "").lower()
    keep = headers["http-version"] == "HTTP/1.1" and "close" not in connection
    if method == "HEAD" or status in (204, 304):
        return b"", keep
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts: List[bytes] = []
        size = 0
        while True:
            chunk = _number((await _read_line(reader)).split(b";")[0], 16)
            if chunk == 0:
                while (await _read_line(reader)) not in (b"\r\n", b"\n"):
                    pass  # trailers
                return b"".join(parts), keep
            size += chunk
            _check_size(size, limit, status)
            parts.append(await reader.readexactly(chunk))
            await reader.readexactly(2)  # CRLF
    if "content-length" in headers:
        length = _number(headers["content-length"].encode("latin-1"), 10)
        _check_size(length, limit, status)
        return await reader.readexactly(length), keep
    parts = []  # to the end: the connection ends with the answer
    size = 0
    while True:
        part = await reader.read(65536)  # what has come, up to 64 KiB; b"" at the end
        if not part:
            return b"".join(parts), False
        size += len(part)
        _check_size(size, limit, status)
        parts.append(part)


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    """A whole line (CRLF included); longer than _LINE_LIMIT or cut by the end is an error."""
    try:
        line = await reader.readline()
    except ValueError as cause:  # asyncio's LimitOverrunError, as readline() reports it
        raise http.client.LineTooLong(f"a line of the answer over {_LINE_LIMIT} bytes") from cause
    if not line.endswith(b"\n"):
        raise http.client.IncompleteRead(line)
    return line


def _number(digits: bytes, base: int) -> int:
    """A Content-Length (base 10) or chunk size (base 16); HTTPException when it is none."""
    text = digits.strip()
    allowed = b"0123456789abcdefABCDEF" if base == 16 else b"0123456789"
    if not text or len(text) > 18 or text.strip(allowed):
        raise http.client.HTTPException(f"not a length: {digits[:40]!r}")
    return int(text, base)


def _check_size(size: int, limit: int, status: int) -> None:
    if size > limit:
        why = "max_response_bytes" if status < 400 else "an error body of the service is far smaller"
        message = f"the service answered {status} with a body larger than {limit} bytes ({why})"
        raise ToolselError("BAD_RESPONSE", message, status)


async def _close_stream(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass  # closed: what it says on the way does not matter


def _drop_stream(writer: asyncio.StreamWriter, loop: asyncio.AbstractEventLoop) -> None:
    """Closes a connection of another event ``loop`` without waiting on it: in that loop where
    it runs, else (it is closed) the socket itself."""
    if not loop.is_closed():
        loop.call_soon_threadsafe(writer.transport.abort)
        return
    wrapped = writer.get_extra_info("socket")  # asyncio's TransportSocket, the socket in _sock
    getattr(wrapped, "_sock", wrapped).close()


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each waiting no later than ``deadline`` (time.monotonic()): the socket
    timeout bounds one read, so a server sending a byte now and then would hold a call for ever."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._socket = sock
        self._raw = sock.makefile("rb", buffering=0)  # holds the socket open as makefile's readers do
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> Optional[int]:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("the answer did not arrive in time")
        self._socket.settimeout(remaining)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Response(http.client.HTTPResponse):
    """http.client's answer, read (status line, headers, body) by a deadline."""

    def __init__(self, sock: socket.socket, *args: Any, deadline: float, **options: Any) -> None:
        super().__init__(sock, *args, **options)
        self.fp.close()  # makefile's reader, not read yet
        self.fp = io.BufferedReader(_DeadlineReader(sock, deadline))


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
    api_key: Optional[str], extra: Mapping[str, str], call: _Call
) -> Tuple[Dict[str, str], Optional[bytes]]:
    """The headers and body of a request (both clients)."""
    headers = {
        "accept": "text/plain" if call.text else "application/json",
        "user-agent": f"toolsel-python/{__version__}",
    }
    headers.update(extra)
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    data: Optional[bytes] = None
    if call.raw_body is not None:
        data = call.raw_body
        if not any(name.lower() == "content-type" for name in headers):
            looks_json = data.lstrip()[:1] in (b"[", b"{")
            headers["content-type"] = "application/json" if looks_json else "text/plain"
    elif call.body is not None:
        data = _json_bytes(call.body)
        headers["content-type"] = "application/json"
    return headers, data


def _answer(call: _Call, status: int, location: Optional[str], payload: bytes) -> Any:
    """What a method returns from an answer (both clients): its JSON (or the call's field of
    it), its text, None for an empty body; or the error it is."""
    where = f"{call.method} {call.path}"
    if 300 <= status < 400:
        raise ToolselError(
            "BAD_RESPONSE",
            f"{where}: HTTP {status} redirect to {location or '(no Location)'}; the client does not "
            "follow redirects: point base_url at the service itself",
            status,
        )
    if status >= 400:
        raise _error_from_response(status, payload, where)
    if call.text:
        return payload.decode("utf-8", errors="replace")
    if not payload:
        return None
    try:
        answer = json.loads(payload.decode("utf-8"))
    except ValueError as cause:
        raise ToolselError(
            "BAD_RESPONSE",
            f"{where}: the service answered {status} with a body that is not JSON: {_excerpt(payload)}",
            status,
        ) from cause
    return answer[call.field] if call.field else answer


# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH: a certificate the CA
# vouches for, issued for other names than base_url's host.
_NAME_MISMATCH = (62, 64)


def _transport_error(cause: BaseException, call: _Call, base_url: str, seconds: float) -> ToolselError:
    """CLIENT_TIMEOUT or NETWORK for what got no answer (both clients)."""
    if isinstance(cause, (socket.timeout, TimeoutError, asyncio.TimeoutError)):
        return ToolselError(
            "CLIENT_TIMEOUT",
            f"{call.method} {call.path} took longer than {seconds:g} s; raise timeout or check the service",
        )
    if isinstance(cause, ssl.SSLCertVerificationError) and cause.verify_code in _NAME_MISMATCH:
        # Trusting another CA would not help: the certificate names other hosts.
        return ToolselError(
            "NETWORK",
            f"{call.method} {base_url}{call.path} failed: {cause}; the service's certificate is for"
            " another host name: use the name it was issued for in base_url",
        )
    if isinstance(cause, ssl.SSLCertVerificationError):
        return ToolselError(
            "NETWORK",
            f"{call.method} {base_url}{call.path} failed: {cause}; the service's certificate is not"
            " trusted: for a private CA pass verify='<CA bundle file>' (or set SSL_CERT_FILE)",
        )
    return ToolselError(
        "NETWORK",
        f"{call.method} {base_url}{call.path} failed: {cause}; is toolsel serving at {base_url}?",
    )


def _read_body(response: http.client.HTTPResponse, limit: int, deadline: float, where: str) -> bytes:
    """The body of an answer (the one place the sync client reads one): ``limit`` bytes at most
    (an error's: 1 MiB at most) and by ``deadline`` (time.monotonic()). A larger body, by its
    Content-Length or as it arrives, is BAD_RESPONSE and read no further (the caller closes the
    connection); a body still arriving at the deadline is a ``socket.timeout`` (CLIENT_TIMEOUT):
    the socket's timeout bounds each read, the deadline all of them together."""
    status = response.status
    if status >= 400:
        limit = min(limit, _MAX_ERROR_BODY_BYTES)

    def too_large() -> ToolselError:
        why = "max_response_bytes" if status < 400 else "an error body of the service is far smaller"
        return ToolselError(
            "BAD_RESPONSE", f"{where}: the service answered {status} with a body larger than {limit} bytes ({why})", status
        )

    declared = (response.getheader("content-length") or "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise too_large()
    sock = getattr(getattr(response.fp, "raw", None), "_sock", None)
    chunks: List[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("the answer's body did not arrive in time")
        if isinstance(sock, socket.socket):
            sock.settimeout(remaining)
        chunk = response.read1(min(65536, limit + 1 - size))
        if not chunk:
            # read() of what is left (nothing) marks the answer done: its connection can be reused.
            chunks.append(response.read())
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise too_large()
        chunks.append(chunk)


def _keep_alive_expiry(keep_alive: Optional[str]) -> Optional[float]:
    """When an idle connection is to be dropped: a second before the service's own
    ``Keep-Alive: timeout=<s>`` closes it (Node's default is 5 s), else in 4 s; None when the
    service keeps idle connections under 2 s (not worth pooling)."""
    seconds = 5.0
    for part in (keep_alive or "").split(","):
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
