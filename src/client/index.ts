/**
 * `toolsel/client`: the typed HTTP client.
 * @module
 */
export {
  CLIENT_OPERATIONS,
  ToolselClient,
  type AddExamplesRequest,
  type AddExamplesResponse,
  type CallOptions,
  type ComponentsResponse,
  type FeedbackRequest,
  type SnapshotResponse,
  type LibraryInfo,
  type PlannerRewardRequest,
  type PlannerRewardResponse,
  type SelectorRewardRequest,
  type SelectorRewardResponse,
  type PutLibraryOptions,
  type PutLibraryResponse,
  type ProviderTools,
  type ReadyResponse,
  type SearchToolsRequest,
  type SearchToolsResponse,
  type SelectedTool,
  type SelectToolsRequest,
  type SelectToolsResponse,
  type ServedTool,
  type ToolselClientOptions,
} from './toolsel-client.ts'
export type {
  AnthropicTool,
  OpenAIChatTool,
  OpenAIResponsesTool,
  ProviderTool,
  ProviderToolFormat,
  ToolFormat,
} from '../library/provider-tools.ts'
export { ToolselClientError, type ClientErrorCode } from './toolsel-client-error.ts'
export type { CaCertificates } from './https-fetch.ts'
