/**
 * Inline SVG charts for the HTML report: grouped bars and line charts on a 0-100% axis. Plain
 * strings, no script and no external resource, so the report opens from a file anywhere.
 * @module
 */

export interface Series {
  name: string
  /** Values in [0, 1]; `null` for "no data" (no bar, a gap in the line). */
  values: Array<number | null>
}

export interface ChartSpec {
  /** Shown above the chart and as the SVG's accessible `<title>`. */
  title: string
  /** Category labels (bar groups) or x positions (line charts), in order. */
  categories: string[]
  series: Series[]
  /** Label of the x axis. */
  xLabel?: string
}

/** Okabe-Ito (colour-blind safe), then four of Tol's muted colours; repeated beyond twelve series. */
const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#000000',
  '#882255',
  '#44AA99',
  '#999933',
  '#888888',
]

const WIDTH = 880
const PLOT = { left: 48, right: 220, top: 36, bottom: 96 }
const HEIGHT = 380

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

const color = (index: number) => PALETTE[index % PALETTE.length]
const plotWidth = WIDTH - PLOT.left - PLOT.right
const plotHeight = HEIGHT - PLOT.top - PLOT.bottom
const yOf = (value: number) => PLOT.top + plotHeight * (1 - Math.min(1, Math.max(0, value)))
const fixed = (value: number) => value.toFixed(1)

function frame(spec: ChartSpec, kind: string, body: string): string {
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map((tick) => {
      const y = fixed(yOf(tick))
      return `<line x1="${PLOT.left}" x2="${PLOT.left + plotWidth}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${PLOT.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" font-size="11">${tick * 100}%</text>`
    })
    .join('')
  const legend = spec.series
    .map((series, index) => {
      const y = PLOT.top + 14 + index * 18
      const x = PLOT.left + plotWidth + 16
      return `<rect x="${x}" y="${y - 9}" width="12" height="12" fill="${color(index)}"/><text x="${x + 18}" y="${y}" font-size="12" dominant-baseline="middle">${escapeXml(series.name)}</text>`
    })
    .join('')
  const xLabel = spec.xLabel
    ? `<text x="${PLOT.left + plotWidth / 2}" y="${PLOT.top + plotHeight + 40}" text-anchor="middle" font-size="12">${escapeXml(spec.xLabel)}</text>`
    : ''
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-${kind}" role="img" aria-label="${escapeXml(spec.title)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" font-family="system-ui, sans-serif"><title>${escapeXml(spec.title)}</title><text x="${PLOT.left}" y="20" font-size="14" font-weight="600">${escapeXml(spec.title)}</text>${grid}${body}<line x1="${PLOT.left}" x2="${PLOT.left + plotWidth}" y1="${PLOT.top + plotHeight}" y2="${PLOT.top + plotHeight}" stroke="#333"/>${legend}${xLabel}</svg>`
}

/** Grouped bars: one group per category, one bar per series. */
export function barChart(spec: ChartSpec): string {
  const groups = Math.max(1, spec.categories.length)
  const groupWidth = plotWidth / groups
  const barWidth = (groupWidth * 0.8) / Math.max(1, spec.series.length)
  const bars: string[] = []
  for (const [group, category] of spec.categories.entries()) {
    const x0 = PLOT.left + group * groupWidth + groupWidth * 0.1
    for (const [index, series] of spec.series.entries()) {
      const value = series.values[group]
      if (value === null || value === undefined) continue
      const x = x0 + index * barWidth
      const y = yOf(value)
      const label = `${series.name} · ${category}: ${(value * 100).toFixed(1)}%`
      bars.push(
        `<rect x="${fixed(x)}" y="${fixed(y)}" width="${fixed(Math.max(1, barWidth - 1))}" height="${fixed(PLOT.top + plotHeight - y)}" fill="${color(index)}"><title>${escapeXml(label)}</title></rect>`,
      )
    }
    const cx = PLOT.left + group * groupWidth + groupWidth / 2
    const ly = PLOT.top + plotHeight + 14
    bars.push(
      `<text x="${fixed(cx)}" y="${ly}" font-size="11" text-anchor="end" transform="rotate(-30 ${fixed(cx)} ${ly})">${escapeXml(category)}</text>`,
    )
  }
  return frame(spec, 'bar', bars.join(''))
}

/** One polyline per series over evenly spaced categories; gaps where a value is null. */
export function lineChart(spec: ChartSpec): string {
  const count = spec.categories.length
  const xOf = (index: number) =>
    PLOT.left + (count <= 1 ? plotWidth / 2 : (plotWidth * index) / (count - 1))
  const parts: string[] = spec.categories.map(
    (category, index) =>
      `<text x="${fixed(xOf(index))}" y="${PLOT.top + plotHeight + 16}" font-size="11" text-anchor="middle">${escapeXml(category)}</text>`,
  )
  for (const [index, series] of spec.series.entries()) {
    let path = ''
    let pen = 'M'
    for (const [position, value] of series.values.entries()) {
      if (value === null || value === undefined) {
        pen = 'M'
        continue
      }
      path += `${pen}${fixed(xOf(position))},${fixed(yOf(value))} `
      pen = 'L'
      const label = `${series.name} · ${spec.categories[position]}: ${(value * 100).toFixed(1)}%`
      parts.push(
        `<circle cx="${fixed(xOf(position))}" cy="${fixed(yOf(value))}" r="3" fill="${color(index)}"><title>${escapeXml(label)}</title></circle>`,
      )
    }
    if (path)
      parts.push(`<path d="${path.trim()}" fill="none" stroke="${color(index)}" stroke-width="2"/>`)
  }
  return frame(spec, 'line', parts.join(''))
}
