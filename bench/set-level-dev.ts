/**
 * Round 42 (explore12, #10): set-level decisions, screened on TRAINING data only (no test query
 * read). The shipped recipe (`toolsel train --learned-dense --dense-free-acceptance`) refitted on
 * folds 1-4 of seed 1, its rule and count chosen on fold 0 as `toolsel train` does; every
 * gold-labelled set's held-out (fold 0) queries are written to `--dump` with their scored
 * candidates, lists, gold and the shipped decision (`--from <dump>` skips the fit and reads one).
 *
 * Then two screens of whole-set decisions on those queries:
 * 1. the oracle ceiling: a few candidate SETS per query (the shipped set, it plus the most
 *    probable other candidate, it minus one tool, the c most probable candidates for every c, each
 *    clause's most probable candidate, and the product of each clause's two most probable), and
 *    how many queries' gold set is among them, generator by generator;
 * 2. a set scorer: a softmax over each query's candidate sets of a few whole-set features (is the
 *    shipped set, summed and least log-odds, coverage of the instruction's terms by the union of
 *    the tools' name and description, redundancy between the tools, size against the clauses,
 *    clauses covered, namespaces), fitted on one half of fold 0 and scored on the other, both ways.
 *
 *   npx tsx bench/set-level-dev.ts --data ../shared/data --dump /tmp/set-level-dump.json
 *   npx tsx bench/set-level-dev.ts --from /tmp/set-level-dump.json
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { benchArgs } from './bench-args.ts'

interface Q {
  set: string
  id: string
  instruction?: string
  gold: string[]
  steps: number
  lists: string[][]
  stepTops: string[][]
  namespaces: Array<string | null>
  ids: string[]
  scored: Array<[string, number, number]>
  shipped: string[]
}
interface Dump {
  rule: unknown
  count: unknown
  queries: Q[]
  toolText: Array<[string, string]>
}

/** Candidate sets of one query, each tagged with the generator that first made it. */
function candidates(q: Q): Map<string, { ids: string[]; from: string }> {
  const p = new Map(q.scored.map(([id, pp]) => [id, pp]))
  const byP = (a: string, b: string) => p.get(b)! - p.get(a)! || (a < b ? -1 : 1)
  const sorted = [...new Set(q.ids)].sort(byP)
  const out = new Map<string, { ids: string[]; from: string }>()
  const add = (ids: string[], from: string) => {
    if (ids.length === 0) return
    const k = idSetKey(ids)
    if (!out.has(k)) out.set(k, { ids: [...new Set(ids)], from })
  }
  const cap = Math.min(4, q.lists.length)
  add(q.shipped, 'shipped')
  // shipped ± 1
  const extra = sorted.find((id) => !q.shipped.includes(id))
  if (extra) add([...q.shipped, extra], 'shipped+1')
  if (q.shipped.length > 1)
    for (const id of q.shipped)
      add(
        q.shipped.filter((x) => x !== id),
        'shipped-1',
      )
  for (let c = 1; c <= cap; c++) add(sorted.slice(0, c), 'top-c')
  // each clause's best, and its best two, as a beam (product of the clauses' top-2), cut to cap
  const clauses = q.lists.slice(0, Math.max(1, q.steps))
  const tops = clauses.map((list) => [...new Set(list)].sort(byP).slice(0, 2))
  const picks = tops.map((t) => t[0]).filter(Boolean)
  add(picks, 'clause-best')
  // clause picks ordered by p, prefixes
  const pickSorted = [...new Set(picks)].sort(byP)
  for (let c = 1; c < pickSorted.length; c++) add(pickSorted.slice(0, c), 'clause-best-prefix')
  let beam: string[][] = [[]]
  for (const t of tops) {
    if (t.length === 0) continue
    beam = beam.flatMap((b) => t.map((id) => [...b, id])).slice(0, 64)
  }
  for (const b of beam) add(b, 'clause-beam2')
  return out
}

function ceilings(dump: Dump) {
  const sets = [...new Set(dump.queries.map((q) => q.set))]
  const gens = [
    'shipped',
    'shipped+1',
    'shipped-1',
    'top-c',
    'clause-best',
    'clause-best-prefix',
    'clause-beam2',
  ]
  console.log(
    '\n== oracle ceilings (held-out fold 0): share of queries whose gold set is among the candidates',
  )
  for (const set of sets) {
    const qs = dump.queries.filter((q) => q.set === set)
    const n = qs.length
    const pool = qs.filter((q) => q.gold.every((g) => q.ids.includes(g))).length
    const counts: Record<string, number> = {}
    const cum = new Array(gens.length).fill(0)
    let sizes = 0
    for (const q of qs) {
      const cands = candidates(q)
      sizes += cands.size
      const hit = [...cands.values()].find((c) => sameIdSet(c.ids, q.gold))
      if (hit) counts[hit.from] = (counts[hit.from] ?? 0) + 1
      gens.forEach((_g, i) => {
        if ([...cands.values()].some((c) => gens.indexOf(c.from) <= i && sameIdSet(c.ids, q.gold)))
          cum[i]++
      })
    }
    const pct = (x: number) => ((100 * x) / n).toFixed(2)
    console.log(
      `${set} (${n}): shipped ${pct(counts.shipped ?? 0)}, all gold in pool ${pct(pool)}, mean candidate sets ${(sizes / n).toFixed(1)}`,
    )
    console.log('  cumulative ceiling: ' + gens.map((g, i) => `${g} ${pct(cum[i])}`).join(' | '))
  }
}

function setScorer(dump: Dump, options: { iterations: number; balanced: boolean; drop: string[] }) {
  const text = new Map(dump.toolText)
  const stems = new Map<string, Set<string>>()
  const stemsOf = (set: string, id: string) => {
    const k = `${set}|${id}`
    let s = stems.get(k)
    if (!s) {
      s = new Set(tokenize(text.get(k) ?? id))
      stems.set(k, s)
    }
    return s
  }
  // features of a candidate set
  type Row = {
    set: string
    id: string
    q: Q
    cands: Array<{ ids: string[]; f: number[]; gold: boolean }>
  }
  const rows: Row[] = dump.queries.map((q) => {
    const p = new Map(q.scored.map(([id, pp]) => [id, pp]))
    const ns = new Map(q.ids.map((id, i) => [id, q.namespaces[i]]))
    const words = new Set(tokenize(q.instruction ?? ''))
    const cands = [...candidates(q).values()].map(({ ids, from }) => {
      const union = new Set<string>()
      for (const id of ids) for (const s of stemsOf(q.set, id)) union.add(s)
      const cover = words.size ? [...words].filter((w) => union.has(w)).length / words.size : 0
      // redundancy: the largest share of one tool's stems another tool of the set holds
      let redund = 0
      for (const a of ids)
        for (const b of ids)
          if (a !== b) {
            const A = stemsOf(q.set, a),
              B = stemsOf(q.set, b)
            const inter = [...A].filter((x) => B.has(x)).length
            redund = Math.max(redund, inter / Math.max(1, Math.min(A.size, B.size)))
          }
      const sumLogit = ids.reduce((s, id) => s + logit(p.get(id) ?? 0), 0)
      const minP = Math.min(...ids.map((id) => p.get(id) ?? 0))
      const nsCount = new Set(ids.map((id) => ns.get(id) ?? id)).size
      // every placed clause covered: how many clauses have one of the set's tools in their list top-3
      const clauses = q.lists.slice(0, Math.max(1, q.steps))
      const covered =
        clauses.filter((l) => l.slice(0, 3).some((id) => ids.includes(id))).length / clauses.length
      const size = ids.length
      const f = [
        from === 'shipped' ? 1 : 0,
        sumLogit,
        logit(minP),
        cover,
        redund,
        size - q.steps,
        Math.abs(size - q.steps),
        size === 1 ? 1 : 0,
        covered,
        nsCount / size,
      ]
      return { ids, f, gold: sameIdSet(ids, q.gold) }
    })
    return { set: q.set, id: q.id, q, cands }
  })
  const names = [
    'isShipped',
    'sumLogit',
    'minLogit',
    'cover',
    'redund',
    'size-steps',
    '|size-steps|',
    'size1',
    'clausesCovered',
    'nsShare',
  ]
  // 2-fold by id hash within fold 0; softmax over each query's candidate sets, fitted by gradient
  // ascent on the log-likelihood of the gold set (`--balanced`: each set's queries weigh as much
  // in all as any other set's).
  crossFitChoices(
    rows,
    (train) =>
      fitChoiceSoftmax(train, names, {
        iterations: options.iterations,
        usable: (r) => r.cands.some((c) => c.gold),
        balanced: options.balanced,
        drop: options.drop,
      }),
    {
      title: 'learned set scorer, 2-fold cross-fit inside fold 0 (exact match %)',
      label: 'set scorer',
      shippedRight: (r) => sameIdSet(r.q.shipped, r.q.gold),
      // No candidate set (no candidate at all): nothing chosen, as the shipped decision.
      first: (r) => r.cands[0],
    },
  )
}

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    dump: { type: 'string', default: '/tmp/set-level-dump.json' },
    from: { type: 'string' },
    iterations: { type: 'string', default: '300' },
    balanced: { type: 'boolean', default: false },
    drop: { type: 'string', default: '' },
  },
})
const { tokenize } = await import('../src/retrieve/bm25/tokenize.ts')
const { crossFitChoices, fitChoiceSoftmax, idSetKey, logit, sameIdSet } =
  await import('./lib/choice-screen.ts')
const dump: Dump =
  values.from !== undefined
    ? (JSON.parse(readFileSync(values.from, 'utf8')) as Dump)
    : await fitAndDump(values.data!, values.dump!)
ceilings(dump)
setScorer(dump, {
  iterations: Number(values.iterations),
  balanced: values.balanced!,
  drop: values.drop!.split(',').filter(Boolean),
})

async function fitAndDump(dataDir: string, file: string): Promise<Dump> {
  const { shippedRecipeFit, reportFit, trainingSetCases } = await import('./training-dev-setup.ts')
  const { decisionInput, foldOf, score } = await import('../src/learn/train-model.ts')
  const { decideTools } = await import('../src/learn/count-model.ts')
  const seed = 1
  const { sources, base, rows, model } = await shippedRecipeFit(dataDir, seed)
  reportFit('shipped', model, rows)
  const cases = trainingSetCases(sources, base)
  const queries: Q[] = []
  const toolText = new Map<string, string>()
  for (const set of rows.sets) {
    if (set.countOnly) continue
    const entry = cases.get(set.name)
    const instruction = new Map(entry?.cases.map((c) => [c.id, c.instruction]) ?? [])
    const tools = new Map(entry?.source.tools.map((t) => [t.id, t]) ?? [])
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      const scored = score(model, query)
      const placed = decideTools(decisionInput(query, scored), model.rule, model.count)
      for (const id of query.ids) {
        const tool = tools.get(id)
        if (tool && !toolText.has(`${set.name}|${id}`))
          toolText.set(`${set.name}|${id}`, `${tool.name} ${tool.description}`)
      }
      queries.push({
        set: set.name,
        id: query.id,
        instruction: instruction.get(query.id),
        gold: query.gold,
        steps: query.steps,
        lists: query.lists,
        stepTops: query.stepTops,
        namespaces: query.namespaces,
        ids: query.ids,
        scored: scored.map((c): [string, number, number] => [c.id, c.p, c.a ?? c.p]),
        shipped: placed.filter((id): id is string => id !== null),
      })
    }
  }
  const dump: Dump = { rule: model.rule, count: model.count, queries, toolText: [...toolText] }
  writeFileSync(file, JSON.stringify(dump))
  console.log(`wrote ${queries.length} held-out queries to ${file}`)
  return dump
}
