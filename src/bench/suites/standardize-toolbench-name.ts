/**
 * ToolBench's name standardization (ToolBench `toolbench/utils.py` `standardize`), as the data
 * README (section 1.4) describes it: every character outside [a-zA-Z0-9_] and CJK becomes `_`,
 * runs of `_` collapse, lower-case, leading/trailing `_` are stripped, and a leading digit gets a
 * `get_` prefix. Releases of ToolBench name some APIs slightly differently; comparing standardized
 * names is how the G3 queries are mapped onto the COLT G3 corpus.
 */
export function standardizeToolbenchName(name: string): string {
  const standardized = name
    .replace(/[^\u4e00-\u9fa5a-zA-Z0-9_]/g, '_')
    .replace(/_+/g, '_')
    .toLowerCase()
    .replace(/^_+|_+$/g, '')
  return /^[0-9]/.test(standardized) ? `get_${standardized}` : standardized
}

/** The standardized `(tool, api)` key of a ToolBench API. */
export function standardizedApiKey(toolName: string, apiName: string): string {
  return `${standardizeToolbenchName(toolName)}::${standardizeToolbenchName(apiName)}`
}
