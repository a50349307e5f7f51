export { CHART_TITLES, renderHtml } from './render-html.ts'
export { renderSummary } from './render-summary.ts'
export { REPORT_FILES, writeReport } from './write-report.ts'
