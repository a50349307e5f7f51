/**
 * Where the shipped default model lives: apart from the model's code so that `toolsel train
 * --help` can name it without loading that (bench/README.md, "CLI start cost", round 49).
 * @module
 */
import { fileURLToPath } from 'node:url'

/** Where the shipped default model lives. */
export const DEFAULT_MODEL_PATH = fileURLToPath(new URL('./default-model.json', import.meta.url))
