import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/setup/tmp-dir.ts', 'test/setup/models.ts', 'test/setup/demo-index.ts'],
    setupFiles: ['test/setup/end-children.ts'],
  },
})
