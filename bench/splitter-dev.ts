/**
 * Round 43 (explore13, #10): a learned splitter (where to cut an instruction into steps),
 * screened on TRAINING data only (no test query read). The shipped recipe (`toolsel train
 * --learned-dense --dense-free-acceptance`) refitted on folds 1-4 of seed 1, its rule and count
 * chosen on fold 0 as `toolsel train` does; then every gold-labelled set's held-out (fold 0)
 * queries are featurised again under other segmentations of their instruction and decided by the
 * same model, rule and count (`--dump` keeps each segmentation's outcome; `--from` reads one).
 *
 * The segmentations, by generator (each counted under the first that makes its steps):
 * `shipped`, the training planner's split (its outcome reproduces the shipped held-out exact
 * match, printed as a check); `second-objects`, the serving planner's (a second object after
 * "and" gets its own step); `planner-places`, every subset of the planner's own cut places (its
 * sentence breaks always cut; every clause separator cut or glued, whether or not the next part
 * opens an action); `wide-places` (`--wide`), every subset also of more places (any comma, and
 * before "to", "if", "using", … when an action verb follows); `context-kept`, each of those with
 * the clauses the planner drops as context kept. Every subset when there are at most
 * `--max-full` places, else the planner's cuts with one place flipped, all and none.
 * `--near`: the chooser sees only the planner's split and those one cut away from it.
 * `--generate-only` prints the generators' counts without the fit.
 *
 * Screen 1, the oracle ceiling: the share of held-out queries for which SOME segmentation's
 * decided set is the gold set. Screen 2 (when the ceiling clears 1 pt): a softmax over each
 * query's segmentations of per-boundary and per-segmentation features, fitted on one half of
 * fold 0 and scored on the other, both ways (the set-level screen's design).
 *
 *   npx tsx bench/splitter-dev.ts --data ../shared/data --wide --dump /tmp/splitter-dump.json
 *   npx tsx bench/splitter-dev.ts --from /tmp/splitter-dump.json
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { benchArgs } from './bench-args.ts'
import type { TrainingCase } from '../src/learn/training-data.ts'

/** One segmentation of a held-out query and what the model decided under it. */
interface Seg {
  /** Cut (1) or not (0) at each clause separator, in order. */
  cuts: number[]
  steps: string[]
  shipped: boolean
  /** The first generator that made it. */
  from: string
  placed: string[]
  exact: boolean
  /** Each clause's most probable candidate and its probability. */
  tops: Array<[string, number]>
  /** The whole instruction's list's first candidate's probability (0: none). */
  wholeTop: number
}
interface Q {
  set: string
  id: string
  gold: string[]
  /** The separators' texts (the cue words at each possible cut). */
  separators: string[]
  segs: Seg[]
}
interface Dump {
  queries: Q[]
}

/**
 * More places a step could end (`--wide`): any comma, and before "to", "so that", "in order to",
 * "before", "after", "while", "if", "which", "using", "by", "with", "for" when an action verb
 * follows (ACTION_VERBS). The planner's separators come first, so where both match they win.
 */
function wideBreak(verbs: ReadonlySet<string>): RegExp {
  const verb = [...verbs].join('|')
  return new RegExp(
    `${CLAUSE_BREAK.source.slice(0, -1)}|,\\s*|\\s+(?=(?:to|so\\s+that|in\\s+order\\s+to|before|after|while|if|which|using|by|with|for)\\s+(?:${verb})(?:s|es|ing|ed)?\\b))`,
    'iu',
  )
}

/** The instruction's sentences, each as parts and the separators between them. */
function atoms(instruction: string, collapse: (s: string) => string, clauseBreak = CLAUSE_BREAK) {
  return collapse(instruction)
    .split(SENTENCE_BREAK)
    .map((sentence) => {
      const pieces = sentence.split(clauseBreak)
      const parts: string[] = []
      const separators: string[] = []
      for (let i = 0; i < pieces.length; i++)
        (i % 2 === 0 ? parts : separators).push(pieces[i] ?? '')
      return { parts, separators }
    })
}

/** The steps of one segmentation (`cuts` over every sentence's separators in order). */
function stepsOf(
  sentences: ReturnType<typeof atoms>,
  cuts: readonly number[],
  instruction: string,
  maxSteps: number,
  isRequest: (s: string) => boolean,
): string[] {
  const steps: string[] = []
  let at = 0
  for (const { parts, separators } of sentences) {
    const clauses = [parts[0]]
    for (let i = 0; i < separators.length; i++) {
      if (cuts[at++]) clauses.push(parts[i + 1])
      else clauses[clauses.length - 1] += separators[i] + parts[i + 1]
    }
    steps.push(...clauses.filter((clause) => isRequest(clause)))
  }
  const cleaned = steps.map(cleanStep).filter((step) => /[\p{L}\p{N}]/u.test(step))
  if (cleaned.length === 0) return [instruction.trim()]
  if (cleaned.length <= maxSteps) return cleaned
  const kept = cleaned.slice(0, maxSteps - 1)
  kept.push(cleaned.slice(maxSteps - 1).join('; '))
  return kept
}

async function fitAndDump(
  dataDir: string,
  file: string,
  maxFull: number,
  widen: boolean,
  generateOnly: boolean,
): Promise<Dump> {
  const { DenseToolVectors } = await import('../src/learn/dense-features.ts')
  // The rows' per-source dense vectors (each source's map learned on the other sources) are not
  // returned by trainingSets: note the instances queryRows asks for features, in order.
  const denseInstances: unknown[] = []
  const input = DenseToolVectors.prototype.input
  DenseToolVectors.prototype.input = function (this: unknown, ...args: Parameters<typeof input>) {
    if (!denseInstances.includes(this)) denseInstances.push(this)
    return input.apply(this as InstanceType<typeof DenseToolVectors>, args)
  }
  const { shippedRecipeFit, reportFit, trainingSetCases } = await import('./training-dev-setup.ts')
  const { decisionInput, foldOf, score } = await import('../src/learn/train-model.ts')
  const { decideTools } = await import('../src/learn/count-model.ts')
  const { queryRows } = await import('../src/learn/training-rows.ts')
  const { RulePlanner, trainingPlanner, collapseWhitespace } =
    await import('../src/plan/rule-planner.ts')
  const { ACTION_VERBS, isRequest, startsWithAction } = await import('../src/plan/request-cues.ts')
  const seed = 1
  const { trainingDevSetup } = await import('./training-dev-setup.ts')
  const fitted = generateOnly ? undefined : await shippedRecipeFit(dataDir, seed)
  const { sources, base } = fitted ?? (await trainingDevSetup(dataDir, seed, { shapes: false }))
  DenseToolVectors.prototype.input = input
  if (fitted) reportFit('shipped', fitted.model, fitted.rows)
  if (fitted && denseInstances.length !== sources.length)
    throw new Error(`expected ${sources.length} dense instances, saw ${denseInstances.length}`)
  const cases = trainingSetCases(sources, base)
  const planner = trainingPlanner(base.maxSteps)
  const servingPlanner = new RulePlanner({ maxSteps: base.maxSteps })
  const wide = widen ? wideBreak(ACTION_VERBS) : CLAUSE_BREAK
  const split = RulePlanner.prototype.split
  const queries: Q[] = []
  const started = performance.now()
  for (const [name, entry] of cases) {
    const sourceIndex = sources.indexOf(entry.source)
    const held = (entry.cases as TrainingCase[]).filter((c) => foldOf(c.id, seed) === 0)
    let mismatched = 0
    // Each held-out case's segmentations.
    const plans = held.map((c) => {
      const sentences = atoms(c.instruction, collapseWhitespace, wide)
      const n = sentences.reduce((s, x) => s + x.separators.length, 0)
      // A separator the planner has (it cuts there when the next part opens an action).
      const plannerPlace = sentences.flatMap((x) =>
        x.separators.map((sep, i) => ANCHORED_BREAK.exec(sep + x.parts[i + 1])?.[0] === sep),
      )
      const shippedSteps = planner.split(c.instruction)
      const seen = new Map<
        string,
        { cuts: number[]; steps: string[]; shipped: boolean; from: string }
      >()
      const add = (cuts: number[], from: string, steps?: string[]) => {
        steps ??= stepsOf(
          sentences,
          cuts,
          c.instruction,
          base.maxSteps,
          from === 'context-kept' ? () => true : isRequest,
        )
        const k = steps.join('\u0001')
        if (!seen.has(k)) seen.set(k, { cuts, steps, shipped: from === 'shipped', from })
      }
      const shippedCuts: number[] = sentences.flatMap((x, s) =>
        x.separators.map((_sep, i) => {
          const at = sentences.slice(0, s).reduce((a, y) => a + y.separators.length, 0) + i
          return plannerPlace[at] && startsWithAction(x.parts[i + 1]) ? 1 : 0
        }),
      )
      add(shippedCuts, 'shipped', shippedSteps)
      if (
        stepsOf(sentences, shippedCuts, c.instruction, base.maxSteps, isRequest).join('\u0001') !==
        shippedSteps.join('\u0001')
      )
        mismatched++
      add(shippedCuts, 'second-objects', servingPlanner.split(c.instruction))
      const subsets = (places: number[]): number[][] => {
        if (places.length > maxFull) {
          const out = [places.map(() => 1), places.map(() => 0)].map((bits) => {
            const cuts = [...shippedCuts]
            places.forEach((at, b) => (cuts[at] = bits[b]))
            return cuts
          })
          for (const at of places) {
            const flipped = [...shippedCuts]
            flipped[at] = 1 - flipped[at]
            out.push(flipped)
          }
          return out
        }
        const out: number[][] = []
        for (let m = 0; m < 1 << places.length; m++) {
          const cuts = [...shippedCuts]
          places.forEach((at, b) => (cuts[at] = (m >> b) & 1))
          out.push(cuts)
        }
        return out
      }
      const planners = [...Array(n).keys()].filter((i) => plannerPlace[i])
      // Wide places cut only where the subsets of every place say so (planner places as shipped).
      for (const cuts of subsets(planners).map((cuts) =>
        cuts.map((v, i) => (plannerPlace[i] ? v : 0)),
      ))
        add(cuts, 'planner-places')
      for (const cuts of subsets([...Array(n).keys()])) add(cuts, 'wide-places')
      for (const { cuts } of [...seen.values()]) add(cuts, 'context-kept')
      return {
        c,
        separators: sentences.flatMap((x) => x.separators.map((s) => s.trim().toLowerCase())),
        segs: [...seen.values()],
      }
    })
    const bySource: Record<string, number> = {}
    for (const p of plans) for (const g of p.segs) bySource[g.from] = (bySource[g.from] ?? 0) + 1
    console.log(
      `${name}: ${held.length} held-out, ${mismatched} whose planner split the cuts do not remake; segmentations by generator ${JSON.stringify(bySource)}`,
    )
    if (!fitted) continue
    const { model } = fitted
    const most = Math.max(0, ...plans.map((p) => p.segs.length))
    const out = plans.map((p) => ({
      set: name,
      id: p.c.id,
      gold: p.c.gold,
      separators: p.separators,
      segs: [] as Seg[],
    }))
    const tools = entry.source.tools
    const dense = denseInstances[sourceIndex] as InstanceType<typeof DenseToolVectors>
    for (let j = 0; j < most; j++) {
      const batch = plans.map((p, i) => ({ p, i })).filter(({ p }) => j < p.segs.length)
      const plan = new Map(batch.map(({ p }) => [p.c.instruction, p.segs[j].steps]))
      RulePlanner.prototype.split = function (instruction: string) {
        return plan.get(instruction) ?? split.call(this, instruction)
      }
      const qrs = queryRows(
        tools,
        batch.map(({ p }) => p.c),
        { bm25: base.bm25, k: base.k, maxSteps: base.maxSteps, dense },
      )
      RulePlanner.prototype.split = split
      qrs.forEach((query, b) => {
        const { p, i } = batch[b]
        const seg = p.segs[j]
        const scored = score(model, query)
        const placed = decideTools(decisionInput(query, scored), model.rule, model.count).filter(
          (id): id is string => id !== null,
        )
        const prob = new Map(scored.map((s) => [s.id, s.p]))
        const tops = query.lists.slice(0, query.steps).map((list): [string, number] => {
          let best: [string, number] = ['', 0]
          for (const id of list) if ((prob.get(id) ?? 0) > best[1]) best = [id, prob.get(id)!]
          return best
        })
        const whole = query.lists.length > query.steps ? query.lists[query.steps] : []
        out[i].segs.push({
          cuts: seg.cuts,
          steps: seg.steps,
          shipped: seg.shipped,
          from: seg.from,
          placed,
          exact: same(placed, query.gold),
          tops,
          wholeTop: Math.max(0, ...whole.map((id) => prob.get(id) ?? 0)),
        })
      })
    }
    queries.push(...out)
    console.log(
      `${name}: featurised, ${(plans.reduce((s, p) => s + p.segs.length, 0) / Math.max(1, held.length)).toFixed(1)} segmentations each (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    )
  }
  const dump: Dump = { queries }
  if (!generateOnly) writeFileSync(file, JSON.stringify(dump))
  if (!generateOnly) console.log(`wrote ${queries.length} held-out queries to ${file}`)
  return dump
}

const key = (ids: readonly string[]) => [...new Set(ids)].sort().join('\u0001')
const same = (a: readonly string[], b: readonly string[]) => key(a) === key(b)

const GENERATORS = ['shipped', 'second-objects', 'planner-places', 'wide-places', 'context-kept']

/** How many separators two segmentations cut differently. */
const distance = (a: Seg, b: Seg) => a.cuts.reduce((d, c, i) => d + (c !== b.cuts[i] ? 1 : 0), 0)

function ceilings(dump: Dump) {
  const sets = [...new Set(dump.queries.map((q) => q.set))]
  console.log(
    '\n== oracle ceiling (held-out fold 0): some segmentation decides the gold set, generators added in order',
  )
  const mean = new Array<number>(GENERATORS.length + 1).fill(0)
  for (const set of sets) {
    const qs = dump.queries.filter((q) => q.set === set)
    const n = qs.length
    const pct = (x: number) => (100 * x) / n
    const cum = GENERATORS.map(
      (_g, i) =>
        qs.filter((q) => q.segs.some((s) => s.exact && GENERATORS.indexOf(s.from) <= i)).length,
    )
    // One cut away from the planner's (same cut places, context dropped as the planner does).
    const near = qs.filter((q) => {
      const ship = q.segs.find((s) => s.shipped)
      return (
        ship !== undefined &&
        q.segs.some((s) => s.exact && s.from !== 'context-kept' && distance(s, ship) <= 1)
      )
    }).length
    ;[...cum, near].forEach((x, i) => (mean[i] += pct(x) / sets.length))
    const segs = qs.reduce((s, q) => s + q.segs.length, 0) / n
    console.log(
      `${set} (${n}), ${segs.toFixed(1)} segmentations each: ` +
        GENERATORS.map((g, i) => `${g} ${pct(cum[i]).toFixed(2)}`).join(' | ') +
        ` | one cut away ${pct(near).toFixed(2)}`,
    )
  }
  console.log(
    'mean: ' +
      GENERATORS.map((g, i) => `${g} ${mean[i].toFixed(2)}`).join(' | ') +
      ` | one cut away ${mean[GENERATORS.length].toFixed(2)}`,
  )
}

/** Screen 2: a segmentation chooser, 2-fold inside fold 0. */
function chooser(dump: Dump, iterations: number, near: boolean) {
  const logit = (p: number) => Math.log(Math.max(1e-6, p) / Math.max(1e-6, 1 - p))
  const names = [
    'isShipped',
    'steps',
    'cutsAwayFromShipped',
    'meanTopLogit',
    'minTopLogit',
    'distinctTopsShare',
    'placedMinusSteps',
    'placedSize',
    'wholeTopLogit',
    'cutAtAnd',
    'cutAtComma',
    'cutAtThen',
    'contextKept',
    'secondObjects',
  ]
  const featuresOf = (q: Q, s: Seg, ship: Seg | undefined): number[] => {
    const logits = s.tops.map(([, p]) => logit(p))
    const distinct = new Set(s.tops.map(([id]) => id)).size / Math.max(1, s.tops.length)
    const cutAt = (re: RegExp) =>
      s.cuts.reduce((a, c, i) => a + (c && re.test(q.separators[i] ?? '') ? 1 : 0), 0)
    return [
      s.shipped ? 1 : 0,
      s.steps.length,
      ship ? distance(s, ship) : 0,
      logits.reduce((a, b) => a + b, 0) / Math.max(1, logits.length),
      Math.min(...logits, 10),
      distinct,
      s.placed.length - s.steps.length,
      s.placed.length,
      logit(s.wholeTop),
      cutAt(/\band\b/),
      cutAt(/^,$/),
      cutAt(/then|after|finally|also|plus/),
      s.from === 'context-kept' ? 1 : 0,
      s.from === 'second-objects' ? 1 : 0,
    ]
  }
  type Row = { q: Q; cands: Array<{ f: number[]; exact: boolean; shipped: boolean }> }
  const rows: Row[] = dump.queries.map((q) => {
    const ship = q.segs.find((s) => s.shipped)
    return {
      q,
      cands: q.segs
        // `--near`: only the planner's split and those one cut away from it (context dropped).
        .filter(
          (s) =>
            !near ||
            s.shipped ||
            (ship !== undefined && s.from !== 'context-kept' && distance(s, ship) <= 1),
        )
        .map((s) => ({ f: featuresOf(q, s, ship), exact: s.exact, shipped: s.shipped })),
    }
  })
  const hash = (s: string) => {
    let h = 2166136261
    for (const c of s) h = Math.imul(h ^ c.charCodeAt(0), 16777619)
    return h >>> 0
  }
  const fit = (train: Row[]) => {
    const d = names.length
    const all = train.flatMap((r) => r.cands.map((c) => c.f))
    const mean = new Array<number>(d).fill(0),
      sd = new Array<number>(d).fill(0)
    for (const f of all) f.forEach((v, i) => (mean[i] += v / all.length))
    for (const f of all) f.forEach((v, i) => (sd[i] += (v - mean[i]) ** 2 / all.length))
    sd.forEach((v, i) => (sd[i] = Math.sqrt(v) || 1))
    const z = (f: number[]) => f.map((v, i) => (v - mean[i]) / sd[i])
    const w = new Array<number>(d).fill(0)
    // Only queries where the choice matters: some segmentation exact and some not.
    const usable = train.filter(
      (r) => r.cands.some((c) => c.exact) && r.cands.some((c) => !c.exact),
    )
    const zsOf = usable.map((r) => r.cands.map((c) => z(c.f)))
    for (let it = 0; it < iterations; it++) {
      const g = new Array<number>(d).fill(0)
      usable.forEach((r, q) => {
        const zs = zsOf[q]
        const s = zs.map((x) => x.reduce((a, v, i) => a + v * w[i], 0))
        const m = Math.max(...s)
        const e = s.map((v) => Math.exp(v - m))
        const Z = e.reduce((a, b) => a + b, 0)
        const gold = r.cands.filter((c) => c.exact).length
        r.cands.forEach((c, j) => {
          // The likelihood of picking any exact segmentation: target spread over the exact ones.
          const target = c.exact ? 1 / gold : 0
          const coef = target - e[j] / Z
          zs[j].forEach((v, i) => (g[i] += coef * v))
        })
      })
      for (let i = 0; i < d; i++) w[i] += (0.5 * (g[i] - 0.1 * w[i])) / Math.max(1, usable.length)
    }
    console.log(`  weights: ${names.map((name, i) => `${name} ${w[i].toFixed(2)}`).join(', ')}`)
    return (f: number[]) => z(f).reduce((a, v, i) => a + v * w[i], 0)
  }
  const sets = [...new Set(rows.map((r) => r.q.set))]
  const result: Record<string, { n: number; shipped: number; chosen: number }> = {}
  for (const half of [0, 1]) {
    const train = rows.filter((r) => hash(r.q.id) % 2 !== half)
    const test = rows.filter((r) => hash(r.q.id) % 2 === half)
    const s = fit(train)
    for (const r of test) {
      const res = (result[r.q.set] ??= { n: 0, shipped: 0, chosen: 0 })
      res.n++
      if (r.cands.find((c) => c.shipped)?.exact) res.shipped++
      if (r.cands.length === 0) continue
      let best = r.cands.find((c) => c.shipped) ?? r.cands[0]
      for (const c of r.cands) if (s(c.f) > s(best.f)) best = c
      if (best.exact) res.chosen++
    }
  }
  console.log(`\n== learned segmentation chooser, 2-fold inside fold 0 (exact match %)`)
  let ms = 0,
    mc = 0
  for (const set of sets) {
    const r = result[set]
    ms += (100 * r.shipped) / r.n / sets.length
    mc += (100 * r.chosen) / r.n / sets.length
    console.log(
      `${set} (${r.n}): shipped ${((100 * r.shipped) / r.n).toFixed(2)} -> chooser ${((100 * r.chosen) / r.n).toFixed(2)}`,
    )
  }
  console.log(`mean: ${ms.toFixed(2)} -> ${mc.toFixed(2)}`)
}

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    dump: { type: 'string', default: '/tmp/splitter-dump.json' },
    from: { type: 'string' },
    'max-full': { type: 'string', default: '5' },
    iterations: { type: 'string', default: '1000' },
    wide: { type: 'boolean', default: false },
    near: { type: 'boolean', default: false },
    'generate-only': { type: 'boolean', default: false },
  },
})
// The screen cuts with the rule planner's own breaks, at every separator (also those the planner
// glues back), and cleans each step as the planner does (loaded once the flags are read).
const { CLAUSE_BREAK, cleanStep, SENTENCE_BREAK } = await import('../src/plan/rule-planner.ts')
const ANCHORED_BREAK = new RegExp(`^${CLAUSE_BREAK.source}`, 'iu')
const dump: Dump =
  values.from !== undefined
    ? (JSON.parse(readFileSync(values.from, 'utf8')) as Dump)
    : await fitAndDump(
        values.data!,
        values.dump!,
        Number(values['max-full']),
        values.wide!,
        values['generate-only']!,
      )
if (values['generate-only']) process.exit(0)
ceilings(dump)
chooser(dump, Number(values.iterations), values.near!)
