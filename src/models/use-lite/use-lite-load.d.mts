/** The slice of EnergeticAI's `EmbeddingsModel` we use. */
export interface UseModel {
  embed(input: string[]): Promise<number[][]>
}

/** The slice of @energetic-ai/core (TensorFlow.js) that starts the backend. */
export interface TfBackendApi {
  ready(): Promise<void>
  getBackend(): string
  setBackend(name: string): Promise<boolean>
  engine(): { registry: Record<string, unknown> }
}

/** Starts TensorFlow.js's WebAssembly backend, then loads the model. */
export function loadUseLite(): Promise<UseModel>

/** Awaits the backend's start; tries it once more when the first start failed. */
export function startWasmBackend(tf: TfBackendApi): Promise<void>

/** The directory use-lite's weights are read from (the weights package's, as resolved). */
export function useLiteWeightsDirectory(): string
