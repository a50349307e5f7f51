/**
 * The embedding model `retrieve.dense` asks for, with its backend options. Indexes are built and
 * loaded through this one function, so a build and a later load agree on the model.
 * @module
 */
import type { DenseConfig } from '../config/schema.ts'
import {
  createEmbeddingModel,
  type EmbeddingModelOptions,
} from '../models/create-embedding-model.ts'
import type { EmbeddingModel } from '../models/embedding-model.ts'
import { SILENT_LOGGER, type Logger } from '../log.ts'

/**
 * Creates (or reuses: instances are shared per id and options) the configured embedder.
 * `device: cuda` reaches the ONNX backend, which falls back to the CPU with a warning when no
 * CUDA provider loads; for the CPU-only backends it is ignored, with a warning.
 */
export async function createConfiguredEmbedder(
  dense: DenseConfig,
  logger: Logger = SILENT_LOGGER,
): Promise<EmbeddingModel> {
  const embedder = await createEmbedder(dense, logger)
  if (!warmed.has(embedder)) {
    warmed.add(embedder)
    // The first forward pass sets up kernels and buffers (about 100 ms for use-lite): pay it
    // while loading, so that a server's first request does not. A load that ran one already
    // (`warmedUp`: use-lite's vector probe, an onnx model's dimension probe) is not warmed up again.
    if (embedder.warmedUp !== true) await embedder.embed(['warm up'], { kind: 'query' })
  }
  return embedder
}

const warmed = new WeakSet<EmbeddingModel>()

function createEmbedder(dense: DenseConfig, logger: Logger): Promise<EmbeddingModel> {
  const id = dense.embedder
  if (!id.startsWith('onnx:')) {
    if (dense.device === 'cuda') {
      logger.warn(
        `Embedder "${id}" runs on the CPU only; retrieve.dense.device "cuda" is ignored (it applies to onnx:<dir> models).`,
      )
    }
    // Each backend gets only the options it reads, so that equal settings share one instance.
    return createEmbeddingModel(
      id,
      id === 'use-lite' ? { threads: dense.threads, logger } : { logger },
    )
  }
  const options: EmbeddingModelOptions = {
    device: dense.device,
    dtype: dense.dtype,
    pooling: dense.pooling,
    normalize: dense.normalize,
    queryPrefix: dense.queryPrefix,
    documentPrefix: dense.documentPrefix,
    maxBatchSize: dense.maxBatchSize,
    logger,
  }
  return createEmbeddingModel(id, options)
}
