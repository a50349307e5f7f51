/**
 * The scoped-MCP benches' library: `size` small tools spread over `servers` servers
 * (namespaces, `srv<k>`) and `tags` tags, each with one `id` parameter.
 * @module
 */
export function serverTools(size: number, servers = 200, tags = 50) {
  return Array.from({ length: size }, (_, i) => ({
    id: `srv${i % servers}.op_${i}`,
    name: `op_${i}`,
    namespace: `srv${i % servers}`,
    tags: [`t${i % tags}`],
    description: `Looks up record ${i} of service ${i % servers}: its status, owner and the last ${i % 7} changes.`,
    parameters: {
      type: 'object',
      properties: { id: { type: 'string', description: 'The record id' } },
    },
  }))
}
