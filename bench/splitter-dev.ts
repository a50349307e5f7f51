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
 *
 * Round 44 (explore14): a per-boundary cut classifier (`cutClassifier`). `--train-share F` also
 * segments and decides a hashed share F of folds 1-4 (by the same folds 1-4 model: the labels
 * see nothing of fold 0) and keeps each cut place's local features; `--cuts-only` keeps only the
 * cut segmentations (no second-object or context-kept ones); `--cut-classifier` runs that screen
 * instead of the chooser (`--l2`: its weight decay).
 *
 *   npx tsx bench/splitter-dev.ts --data ../shared/data --wide --cuts-only --train-share 0.5 \
 *     --dump /tmp/cut-dump.json --cut-classifier
 *   npx tsx bench/splitter-dev.ts --from /tmp/cut-dump.json --cut-classifier
 *
 * Round 45 (explore15): `--census`, the shipped split alone, and a census of fold 0's misses
 * (`census`: right count but a wrong tool, by where the gold tool it missed is; too many; too
 * few, with fewer clauses than gold tools or not), with each bucket's points if it alone were
 * fixed; the dump then also holds the model and the held-out rows, and `--replay` decides them
 * again (a check) and prints the count's oracle ceilings (`replay`).
 *
 *   npx tsx bench/splitter-dev.ts --data ../shared/data --census --dump /tmp/census-dump.json
 *   npx tsx bench/splitter-dev.ts --from /tmp/census-dump.json --census --replay
 *
 * Round 46 (plan16): `--serving` decides the serving planner's split (`new RulePlanner()`, what
 * `toolsel select` plans with) instead of the training planner's, by the same folds 1-4 model:
 * a serving-only planner setting measured on the training folds' held-out queries.
 *
 *   npx tsx bench/splitter-dev.ts --data ../shared/data --census --serving --dump /tmp/serving.json
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
  /** `--census`, the shipped split only: where each gold tool is (census). */
  goldAt?: GoldAt[]
}
/** Where one gold tool is among a held-out query's candidates (`--census`). */
interface GoldAt {
  id: string
  /** Its best rank by the model's probability in a clause list (1 first; 0: in no clause list). */
  stepRank: number
  /** Its rank by probability in the whole instruction's list (0: not in it). */
  wholeRank: number
  /** Its rank by probability among every candidate of the query (0: not a candidate). */
  poolRank: number
  p: number
}
interface Q {
  set: string
  id: string
  /** The query's fold (seed 1): 0 held out; 1-4 only with `--train-share` (the cut classifier's labels). */
  fold?: number
  /** Each separator's local features (BOUNDARY_FEATURES, `--train-share` runs only). */
  bounds?: number[][]
  gold: string[]
  /** The separators' texts (the cue words at each possible cut). */
  separators: string[]
  segs: Seg[]
}
interface Dump {
  queries: Q[]
  /** `--census`: the folds 1-4 model and each held-out query's rows under the shipped split. */
  replay?: { model: unknown; rows: Array<{ set: string; query: unknown }> }
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
  trainShare: number,
  cutsOnly: boolean,
  censusOnly = false,
  serving = false,
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
  const { queryRows, searchFunction } = await import('../src/learn/training-rows.ts')
  const { Bm25Retriever } = await import('../src/retrieve/bm25/bm25-retriever.ts')
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
  const replayRows: Array<{ set: string; query: unknown }> = []
  const started = performance.now()
  for (const [name, entry] of cases) {
    const sourceIndex = sources.indexOf(entry.source)
    // Fold 0, and (`--train-share`) a hashed share of folds 1-4 for the cut classifier's labels.
    const held = (entry.cases as TrainingCase[]).filter(
      (c) => foldOf(c.id, seed) === 0 || fnv1a(c.id) / 2 ** 32 < trainShare,
    )
    const search = searchFunction(Bm25Retriever.build(entry.source.tools, base.bm25), base.k)
    const family = new Map(
      entry.source.tools.map((t) => [t.id, t.namespace ?? t.id.split(/[./:]/)[0]]),
    )
    let mismatched = 0
    // Each held-out case's segmentations.
    const plans = held.map((c) => {
      const sentences = atoms(c.instruction, collapseWhitespace, wide)
      const n = sentences.reduce((s, x) => s + x.separators.length, 0)
      // A separator the planner has (it cuts there when the next part opens an action).
      const plannerPlace = sentences.flatMap((x) =>
        x.separators.map((sep, i) => ANCHORED_BREAK.exec(sep + x.parts[i + 1])?.[0] === sep),
      )
      // `--serving`: the serving planner's split stands in for the training planner's.
      const shippedSteps = (serving ? servingPlanner : planner).split(c.instruction)
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
      // `--census`: the shipped split alone.
      if (censusOnly) return { c, separators: [], segs: [...seen.values()], bounds: undefined }
      if (!cutsOnly) add(shippedCuts, 'second-objects', servingPlanner.split(c.instruction))
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
      if (!cutsOnly) for (const { cuts } of [...seen.values()]) add(cuts, 'context-kept')
      return {
        c,
        separators: sentences.flatMap((x) => x.separators.map((s) => s.trim().toLowerCase())),
        segs: [...seen.values()],
        bounds:
          trainShare > 0
            ? boundaryFeatures(sentences, shippedCuts, plannerPlace, {
                search,
                family,
                startsWithAction,
              })
            : undefined,
      }
    })
    const bySource: Record<string, number> = {}
    for (const p of plans) for (const g of p.segs) bySource[g.from] = (bySource[g.from] ?? 0) + 1
    console.log(
      `${name}: ${held.length} queries (${held.filter((c) => foldOf(c.id, seed) === 0).length} held out), ${mismatched} whose planner split the cuts do not remake; segmentations by generator ${JSON.stringify(bySource)}`,
    )
    if (!fitted) continue
    const { model } = fitted
    const most = Math.max(0, ...plans.map((p) => p.segs.length))
    const out = plans.map((p) => ({
      set: name,
      id: p.c.id,
      fold: foldOf(p.c.id, seed),
      gold: p.c.gold,
      separators: p.separators,
      ...(p.bounds && { bounds: p.bounds }),
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
        const rankIn = (list: readonly string[], id: string) => {
          if (!list.includes(id)) return 0
          const p = prob.get(id) ?? 0
          return 1 + list.filter((other) => (prob.get(other) ?? 0) > p).length
        }
        if (censusOnly) replayRows.push({ set: name, query })
        const goldAt = censusOnly
          ? query.gold.map((id) => {
              const ranks = query.lists
                .slice(0, query.steps)
                .map((list) => rankIn(list, id))
                .filter((r) => r > 0)
              return {
                id,
                stepRank: ranks.length ? Math.min(...ranks) : 0,
                wholeRank: rankIn(whole, id),
                poolRank: rankIn(query.ids, id),
                p: prob.get(id) ?? 0,
              }
            })
          : undefined
        out[i].segs.push({
          cuts: seg.cuts,
          steps: seg.steps,
          shipped: seg.shipped,
          from: seg.from,
          placed,
          exact: sameIdSet(placed, query.gold),
          tops,
          wholeTop: Math.max(0, ...whole.map((id) => prob.get(id) ?? 0)),
          ...(goldAt && { goldAt }),
        })
      })
    }
    queries.push(...out)
    console.log(
      `${name}: featurised, ${(plans.reduce((s, p) => s + p.segs.length, 0) / Math.max(1, held.length)).toFixed(1)} segmentations each (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    )
  }
  const dump: Dump = {
    queries,
    ...(censusOnly && fitted && { replay: { model: fitted.model, rows: replayRows } }),
  }
  if (!generateOnly) writeFileSync(file, JSON.stringify(dump))
  if (!generateOnly) console.log(`wrote ${queries.length} held-out queries to ${file}`)
  return dump
}

/** The local features of one possible cut place (`boundaryFeatures`), in order. */
const BOUNDARY_FEATURES = [
  'plannerPlace',
  'plannerCut',
  'rightOpensAction',
  'placeAndPlannerAction',
  'sepAnd',
  'sepComma',
  'sepThenAlsoAfter',
  'sepColonSemicolon',
  'cueTo',
  'cueIfBeforeAfterWhile',
  'cueUsingByWithForWhich',
  'positionInSentence',
  'lastInSentence',
  'placesInInstruction',
  'leftWords',
  'rightWords',
  'leftTop',
  'leftGap',
  'rightTop',
  'rightGap',
  'gluedTop',
  'gluedGap',
  'gluedMinusBestSide',
  'sameTopTool',
  'sameTopFamily',
  'top5Overlap',
  'plannerCutTimesOverlap',
  'plannerCutTimesSameTop',
]

/**
 * The local features of every separator (a possible cut place) of one instruction: the cue at the
 * place, where it is, the words of the parts either side, BM25 (the rows' retrieval) of the left
 * part, the right part and the two glued: top score and gap to the second (log1p), whether both
 * sides' first candidates are the same tool or family (namespace, else the id's first segment),
 * and the overlap of their first five candidates.
 */
function boundaryFeatures(
  sentences: ReturnType<typeof atoms>,
  plannerCuts: readonly number[],
  plannerPlace: readonly boolean[],
  {
    search,
    family,
    startsWithAction,
  }: {
    search: (text: string) => Array<{ id: string; score: number }>
    family: ReadonlyMap<string, string>
    startsWithAction: (clause: string) => boolean
  },
): number[][] {
  const total = plannerCuts.length
  const memo = new Map<string, Array<{ id: string; score: number }>>()
  const top = (text: string) => {
    let list = memo.get(text)
    if (!list) memo.set(text, (list = search(text)))
    return list
  }
  const words = (text: string) => Math.log1p(text.split(/\s+/).filter(Boolean).length)
  const out: number[][] = []
  let at = 0
  for (const { parts, separators } of sentences) {
    separators.forEach((raw, i) => {
      const sep = raw.trim().toLowerCase()
      const left = parts[i] ?? ''
      const right = parts[i + 1] ?? ''
      const first = /^\s*(\w+(?:\s+\w+){0,2})/.exec(right)?.[1].toLowerCase() ?? ''
      const [l, r, g] = [left, right, left + raw + right].map(top)
      const s1 = (list: Array<{ score: number }>) => Math.log1p(list[0]?.score ?? 0)
      const gap = (list: Array<{ score: number }>) =>
        Math.log1p(list[0]?.score ?? 0) - Math.log1p(list[1]?.score ?? 0)
      const l5 = new Set(l.slice(0, 5).map((c) => c.id))
      const r5 = r.slice(0, 5).map((c) => c.id)
      const inter = r5.filter((id) => l5.has(id)).length
      const union = new Set([...l5, ...r5]).size
      const overlap = union === 0 ? 0 : inter / union
      const sameTop = l[0] !== undefined && l[0].id === r[0]?.id ? 1 : 0
      const sameFamily =
        l[0] !== undefined && r[0] !== undefined && family.get(l[0].id) === family.get(r[0].id)
          ? 1
          : 0
      const cut = plannerCuts[at] ?? 0
      const action = startsWithAction(right) ? 1 : 0
      out.push([
        plannerPlace[at] ? 1 : 0,
        cut,
        action,
        plannerPlace[at] && action ? 1 : 0,
        /\band\b/.test(sep) ? 1 : 0,
        sep.startsWith(',') ? 1 : 0,
        /then|also|after|finally|plus|afterwards/.test(sep) ? 1 : 0,
        /^[:;]/.test(sep) ? 1 : 0,
        sep === '' && /^(to|so that|in order)\b/.test(first) ? 1 : 0,
        sep === '' && /^(if|before|after|while)\b/.test(first) ? 1 : 0,
        sep === '' && /^(using|by|with|for|which)\b/.test(first) ? 1 : 0,
        (i + 1) / separators.length,
        i === separators.length - 1 ? 1 : 0,
        Math.log1p(total),
        words(left),
        words(right),
        s1(l),
        gap(l),
        s1(r),
        gap(r),
        s1(g),
        gap(g),
        s1(g) - Math.max(s1(l), s1(r)),
        sameTop,
        sameFamily,
        overlap,
        cut * overlap,
        cut * sameTop,
      ])
      at++
    })
  }
  return out
}

/**
 * Round 44 (explore14): a per-boundary cut classifier. Each cut place of a request is labelled
 * from the oracle: cut or glued in its best segmentation (an exact one; of several, the fewest
 * cuts away from the planner's; requests no cut segmentation makes exact give no labels). A
 * logistic regression on the places' local features (`boundaryFeatures`) is fitted on the
 * labelled places of folds 1-4 (decided by the model fitted on folds 1-4: nested, nothing of fold
 * 0), then (1) its held-out accuracy on fold 0's labelled places against the planner's cut, and
 * (2) each fold-0 request segmented by it: of the request's cut segmentations (the planner's, the
 * planner's places, the wider places), the most probable under the classifier (the planner's on
 * a tie; a bias added to every cut's log-odds, chosen on folds 1-4), scored as exact match.
 */
function cutClassifier(dump: Dump, iterations: number, l2: number) {
  const cutSegs = (q: Q) =>
    q.segs.filter((s) => s.from !== 'context-kept' && s.from !== 'second-objects')
  /** The oracle's cuts: the exact cut segmentation nearest the planner's (undefined: none). */
  const oracle = (q: Q): number[] | undefined => {
    const ship = q.segs.find((s) => s.shipped)
    if (!ship) return undefined
    let best: Seg | undefined
    for (const s of cutSegs(q))
      if (s.exact && (best === undefined || distance(s, ship) < distance(best, ship))) best = s
    return best?.cuts
  }
  const withBounds = dump.queries.filter((q) => q.bounds !== undefined)
  const train = withBounds.filter((q) => (q.fold ?? 0) !== 0)
  const test = withBounds.filter((q) => (q.fold ?? 0) === 0)
  if (train.length === 0)
    throw new Error('no folds 1-4 queries in the dump: run with --train-share')
  const labelled = (qs: Q[]) =>
    qs.flatMap((q) => {
      const cuts = oracle(q)
      return cuts === undefined ? [] : q.bounds!.map((f, i) => ({ q, f, y: cuts[i] ?? 0 }))
    })
  const trainRows = labelled(train)
  const testRows = labelled(test)
  const d = BOUNDARY_FEATURES.length
  const z = standardiser(
    trainRows.map((r) => r.f),
    d,
  )
  const zs = trainRows.map((r) => z(r.f))
  /**
   * Logistic regression on the standardised features: full-batch gradient ascent on the mean
   * (weighted) log-likelihood, L2 on the weights, Adam steps. Returns [weights, bias].
   */
  const fitLogistic = (ys: number[], weights: number[]): [number[], number] => {
    const w = new Array<number>(d).fill(0)
    let b = 0
    const m = new Array<number>(d + 1).fill(0)
    const v = new Array<number>(d + 1).fill(0)
    const total = weights.reduce((a, x) => a + x, 0)
    for (let it = 1; it <= iterations; it++) {
      const g = new Array<number>(d + 1).fill(0)
      zs.forEach((x, r) => {
        const p = 1 / (1 + Math.exp(-(b + x.reduce((a, xi, i) => a + xi * w[i], 0))))
        const e = weights[r] * (ys[r] - p)
        x.forEach((xi, i) => (g[i] += e * xi))
        g[d] += e
      })
      for (let i = 0; i <= d; i++) {
        const gi = g[i] / total - (i < d ? l2 * w[i] : 0)
        m[i] = 0.9 * m[i] + 0.1 * gi
        v[i] = 0.999 * v[i] + 0.001 * gi * gi
        const step =
          (0.05 * (m[i] / (1 - 0.9 ** it))) / (Math.sqrt(v[i] / (1 - 0.999 ** it)) + 1e-8)
        if (i < d) w[i] += step
        else b += step
      }
    }
    return [w, b]
  }
  const [w, b] = fitLogistic(
    trainRows.map((r) => r.y),
    trainRows.map(() => 1),
  )
  const cutLogit = (f: number[]) => b + z(f).reduce((a, xi, i) => a + xi * w[i], 0)
  console.log(
    `\n== per-boundary cut classifier: ${trainRows.length} labelled places of ${train.length} folds 1-4 queries (${train.filter((q) => oracle(q)).length} with an exact cut segmentation)`,
  )
  console.log(
    `  weights: bias ${b.toFixed(2)}, ${BOUNDARY_FEATURES.map((n, i) => `${n} ${w[i].toFixed(2)}`).join(', ')}`,
  )
  // Screen 1: the labels' predictability, against always the planner's cut.
  const plannerCut = BOUNDARY_FEATURES.indexOf('plannerCut')
  const accuracy = (rows: typeof trainRows, label: string) => {
    let planner = 0,
      model = 0,
      disagree = 0,
      flipsRight = 0,
      flipsMade = 0
    for (const { f, y } of rows) {
      const pc = f[plannerCut]
      const mc = cutLogit(f) > 0 ? 1 : 0
      if (pc === y) planner++
      if (mc === y) model++
      if (pc !== y) disagree++
      if (mc !== pc) {
        flipsMade++
        if (mc === y) flipsRight++
      }
    }
    const pct = (x: number) => ((100 * x) / Math.max(1, rows.length)).toFixed(2)
    console.log(
      `  ${label}: ${rows.length} places, the oracle's label differs from the planner's cut at ${disagree} (${pct(disagree)}%); accuracy planner ${pct(planner)}%, classifier ${pct(model)}% (flips ${flipsMade}, right ${flipsRight})`,
    )
  }
  accuracy(trainRows, 'folds 1-4 (in-sample)')
  accuracy(testRows, 'fold 0 (held out)')
  // How well the places where the oracle departs from the planner can be found at all: ranked by
  // the classifier's odds against the planner's cut, and by a model fitted for that target alone
  // (class-balanced), the held-out AUC and the share of real departures among the first k.
  const departs = trainRows.map((r) => (r.f[plannerCut] !== r.y ? 1 : 0))
  const positives = departs.reduce((a: number, x) => a + x, 0)
  const [fw, fb] = fitLogistic(
    departs,
    departs.map((x) =>
      x
        ? trainRows.length / (2 * positives)
        : trainRows.length / (2 * (trainRows.length - positives)),
    ),
  )
  const flipLogit = (f: number[]) => fb + z(f).reduce((a, xi, i) => a + xi * fw[i], 0)
  const ranking = (label: string, against: (f: number[]) => number) => {
    const ranked = testRows
      .map((r) => ({ s: against(r.f), y: r.f[plannerCut] !== r.y ? 1 : 0 }))
      .sort((a, b) => b.s - a.s)
    const pos = ranked.filter((r) => r.y).length
    let auc = 0,
      seen = 0
    // AUC: the chance a departure ranks above a place where the planner is right (ties count half).
    for (let i = 0; i < ranked.length;) {
      let j = i
      while (j < ranked.length && ranked[j].s === ranked[i].s) j++
      const group = ranked.slice(i, j)
      const gp = group.filter((r) => r.y).length
      auc += (group.length - gp) * (seen + gp / 2)
      seen += gp
      i = j
    }
    auc /= Math.max(1, pos * (ranked.length - pos))
    const at = [10, 25, 50, 100].map((k) => `${k}: ${ranked.slice(0, k).filter((r) => r.y).length}`)
    console.log(
      `  fold 0, ${label}: AUC ${auc.toFixed(3)}; departures among the first k: ${at.join(', ')} (of ${pos} in ${ranked.length})`,
    )
  }
  ranking('by the classifier against the planner', (f) =>
    f[plannerCut] ? -cutLogit(f) : cutLogit(f),
  )
  ranking('by a departure model (class-balanced)', flipLogit)
  console.log(
    `  departure model weights: bias ${fb.toFixed(2)}, ${BOUNDARY_FEATURES.map((n, i) => `${n} ${fw[i].toFixed(2)}`).join(', ')}`,
  )
  // Screen 2: each request segmented by the classifier (restricted to its cut segmentations).
  const choose = (q: Q, bias: number): Seg | undefined => {
    const ship = q.segs.find((s) => s.shipped)
    const ls = q.bounds!.map((f) => cutLogit(f) + bias)
    const score = (s: Seg) =>
      s.cuts.reduce((a, c, i) => a - Math.log1p(Math.exp(c ? -(ls[i] ?? 0) : (ls[i] ?? 0))), 0)
    let best = ship
    for (const s of cutSegs(q)) if (best === undefined || score(s) > score(best) + 1e-9) best = s
    return best
  }
  const endToEnd = (qs: Q[], bias: number) => {
    const sets = [...new Set(qs.map((q) => q.set))]
    const per = sets.map((set) => {
      const xs = qs.filter((q) => q.set === set)
      const shipped = xs.filter((q) => q.segs.find((s) => s.shipped)?.exact).length
      const chosen = xs.filter((q) => choose(q, bias)?.exact).length
      const moved = xs.filter((q) => !choose(q, bias)?.shipped).length
      return {
        set,
        n: xs.length,
        shipped: (100 * shipped) / xs.length,
        chosen: (100 * chosen) / xs.length,
        moved,
      }
    })
    const avg = (k: 'shipped' | 'chosen') => per.reduce((a, r) => a + r[k], 0) / per.length
    return { per, shipped: avg('shipped'), chosen: avg('chosen') }
  }
  const biases = [-4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4]
  console.log(`\n== segmented by the classifier (exact match %, mean of the sets)`)
  let bestBias = 0,
    bestMean = -Infinity
  for (const bias of biases) {
    const tr = endToEnd(train, bias)
    const te = endToEnd(test, bias)
    console.log(
      `  bias ${bias}: folds 1-4 (in-sample) ${tr.shipped.toFixed(2)} -> ${tr.chosen.toFixed(2)} | fold 0 ${te.shipped.toFixed(2)} -> ${te.chosen.toFixed(2)}`,
    )
    if (tr.chosen > bestMean + 1e-9) {
      bestMean = tr.chosen
      bestBias = bias
    }
  }
  const te = endToEnd(test, bestBias)
  console.log(`\n== fold 0 (held out), bias ${bestBias} chosen on folds 1-4`)
  for (const r of te.per)
    console.log(
      `${r.set} (${r.n}): shipped ${r.shipped.toFixed(2)} -> classifier ${r.chosen.toFixed(2)} (${r.moved} requests cut otherwise)`,
    )
  console.log(`mean: ${te.shipped.toFixed(2)} -> ${te.chosen.toFixed(2)}`)
}

const GENERATORS = ['shipped', 'second-objects', 'planner-places', 'wide-places', 'context-kept']

/** How many separators two segmentations cut differently. */
const distance = (a: Seg, b: Seg) => a.cuts.reduce((d, c, i) => d + (c !== b.cuts[i] ? 1 : 0), 0)

function ceilings(all: Dump) {
  const dump = { queries: all.queries.filter((q) => (q.fold ?? 0) === 0) }
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
  type Row = {
    set: string
    id: string
    cands: Array<{ f: number[]; gold: boolean; shipped: boolean }>
  }
  const rows: Row[] = dump.queries
    .filter((q) => (q.fold ?? 0) === 0)
    .map((q) => {
      const ship = q.segs.find((s) => s.shipped)
      return {
        set: q.set,
        id: q.id,
        cands: q.segs
          // `--near`: only the planner's split and those one cut away from it (context dropped).
          .filter(
            (s) =>
              !near ||
              s.shipped ||
              (ship !== undefined && s.from !== 'context-kept' && distance(s, ship) <= 1),
          )
          .map((s) => ({ f: featuresOf(q, s, ship), gold: s.exact, shipped: s.shipped })),
      }
    })
  crossFitChoices(
    rows,
    (train) =>
      fitChoiceSoftmax(train, names, {
        iterations,
        // Only queries where the choice matters: some segmentation exact and some not.
        usable: (r) => r.cands.some((c) => c.gold) && r.cands.some((c) => !c.gold),
      }),
    {
      title: 'learned segmentation chooser, 2-fold inside fold 0 (exact match %)',
      label: 'chooser',
      shippedRight: (r) => r.cands.find((c) => c.shipped)?.gold === true,
      first: (r) => r.cands.find((c) => c.shipped) ?? r.cands[0],
    },
  )
}

/** The rank bucket of a gold tool the decision missed (`--census`). */
const rankBucket = (g: GoldAt) =>
  g.stepRank === 1
    ? 'rank 1'
    : g.stepRank === 2
      ? 'rank 2'
      : g.stepRank >= 3 && g.stepRank <= 5
        ? 'rank 3-5'
        : g.stepRank >= 6
          ? 'rank 6-15'
          : g.poolRank > 0
            ? 'whole list only'
            : 'not retrieved'
const RANK_BUCKETS = [
  'rank 1',
  'rank 2',
  'rank 3-5',
  'rank 6-15',
  'whole list only',
  'not retrieved',
]

/**
 * Round 45 (explore15), the census of fold 0's misses under the shipped split: each held-out
 * query that is not exact goes into one bucket (right count but a wrong tool, by the worst rank of
 * a gold tool it missed; too many tools; too few), and the points each bucket would give if it
 * alone were fixed (its share of the set, as the set's exact match counts).
 */
function census(all: Dump) {
  const qs = all.queries.filter((q) => (q.fold ?? 0) === 0)
  const sets = [...new Set(qs.map((q) => q.set))]
  const buckets = [
    ...RANK_BUCKETS.map((b) => `right count, wrong tool: ${b}`),
    'too many: gold all placed',
    'too many: and a gold one missed',
    'too few, fewer clauses than gold: placed all gold',
    'too few, fewer clauses than gold: and a wrong one',
    'too few, clauses enough: placed all gold',
    'too few, clauses enough: and a wrong one',
    'nothing placed',
  ]
  const share = new Map<string, Map<string, number>>()
  const missed = new Map<string, Map<string, number>>()
  const exact = new Map<string, number>()
  for (const set of sets) {
    const rows = qs.filter((q) => q.set === set)
    const count = new Map<string, number>()
    const miss = new Map<string, number>()
    let ok = 0
    for (const q of rows) {
      const seg = q.segs.find((s) => s.shipped)
      if (!seg?.goldAt) throw new Error('no census in the dump: run with --census')
      if (seg.exact) {
        ok++
        continue
      }
      const placed = new Set(seg.placed)
      const gold = new Set(q.gold)
      const lost = seg.goldAt.filter((g) => !placed.has(g.id))
      for (const g of lost) miss.set(rankBucket(g), (miss.get(rankBucket(g)) ?? 0) + 1)
      const wrong = [...placed].some((id) => !gold.has(id))
      const worst = lost.reduce((w, g) => Math.max(w, RANK_BUCKETS.indexOf(rankBucket(g))), 0)
      const clauses = seg.steps.length < gold.size ? 'fewer clauses than gold' : 'clauses enough'
      const bucket =
        placed.size === 0
          ? 'nothing placed'
          : placed.size === gold.size
            ? `right count, wrong tool: ${RANK_BUCKETS[worst]}`
            : placed.size > gold.size
              ? lost.length
                ? 'too many: and a gold one missed'
                : 'too many: gold all placed'
              : `too few, ${clauses}: ${wrong ? 'and a wrong one' : 'placed all gold'}`
      count.set(bucket, (count.get(bucket) ?? 0) + 1)
    }
    share.set(set, new Map([...count].map(([b, n]) => [b, (100 * n) / rows.length])))
    missed.set(set, miss)
    exact.set(set, (100 * ok) / rows.length)
    console.log(`${set} (${rows.length}): exact ${((100 * ok) / rows.length).toFixed(2)}`)
  }
  console.log(`\n== census of fold 0's misses: points each bucket gives if fixed alone`)
  console.log(`| bucket | ${sets.join(' | ')} | mean |`)
  const mean = (f: (set: string) => number) => sets.reduce((a, s) => a + f(s), 0) / sets.length
  console.log(
    `| exact (shipped) | ${sets.map((s) => exact.get(s)!.toFixed(2)).join(' | ')} | ${mean((s) => exact.get(s)!).toFixed(2)} |`,
  )
  for (const b of buckets) {
    const v = (s: string) => share.get(s)!.get(b) ?? 0
    console.log(
      `| ${b} | ${sets.map((s) => v(s).toFixed(2)).join(' | ')} | ${mean(v).toFixed(2)} |`,
    )
  }
  console.log(`\n== missed gold tools (not placed) by where they are`)
  for (const set of sets) {
    const m = missed.get(set)!
    const n = [...m.values()].reduce((a, b) => a + b, 0)
    console.log(
      `${set}: ${n} missed; ` + RANK_BUCKETS.map((b) => `${b} ${m.get(b) ?? 0}`).join(', '),
    )
  }
}

/**
 * Round 45 (explore15), `--census --replay`: the held-out rows under the shipped split decided
 * again by the folds 1-4 model (a check that the dump reproduces the fit's exact match), and
 * the oracle ceilings of the count: the gold count given, the rule's set cut to |gold| or filled
 * up with the most probable other candidates, or the |gold| most probable candidates (neither
 * placed one tool per request: an upper bound of any count lever on these probabilities).
 */
async function replay(all: Dump) {
  if (!all.replay) throw new Error('no replay rows in the dump: run with --census')
  const { decisionInput, score } = await import('../src/learn/train-model.ts')
  const { decideTools, byProbability } = await import('../src/learn/count-model.ts')
  const { decideSet, mostProbableFirst } = await import('../src/learn/decide-set.ts')
  type Model = ReturnType<typeof import('../src/learn/train-model.ts').fitTrainingSets>
  type Rows = Parameters<typeof score>[1]
  const model = all.replay.model as Model
  const rows = all.replay.rows as Array<{ set: string; query: Rows }>
  const sets = [...new Set(rows.map((r) => r.set))]
  const variants: Record<string, (q: Rows, scored: ReturnType<typeof score>) => string[]> = {
    shipped: (q, scored) =>
      decideTools(decisionInput(q, scored), model.rule, model.count).filter(
        (id): id is string => id !== null,
      ),
    'top-|gold| by probability (oracle count)': (q, scored) =>
      [...scored]
        .sort(mostProbableFirst)
        .slice(0, new Set(q.gold).size)
        .map((c) => c.id),
    'rule set cut/extended to |gold| (oracle count)': (q, scored) => {
      const input = decisionInput(q, scored)
      const set = decideSet(scored, Math.max(1, q.steps), model.rule, input.stepTops)
      const chosen = byProbability(set, scored).slice(0, new Set(q.gold).size)
      for (const c of [...scored].sort(mostProbableFirst)) {
        if (chosen.length >= new Set(q.gold).size) break
        if (!chosen.includes(c.id)) chosen.push(c.id)
      }
      return chosen
    },
  }
  const stored = new Map(
    all.queries.map((q) => [`${q.set}\u0001${q.id}`, q.segs.find((s) => s.shipped)?.exact]),
  )
  const result = new Map<string, Map<string, number>>()
  let mismatch = 0
  for (const { set, query } of rows) {
    const scored = score(model, query)
    for (const [name, decide] of Object.entries(variants)) {
      const ok = sameIdSet(decide(query, scored), query.gold)
      if (name === 'shipped' && ok !== stored.get(`${set}\u0001${query.id}`)) mismatch++
      const m = result.get(name) ?? new Map<string, number>()
      result.set(name, m)
      if (ok) m.set(set, (m.get(set) ?? 0) + 1)
    }
  }
  console.log(
    `\n== replay (${rows.length} held-out rows, ${mismatch} shipped decisions differing from the dump's)`,
  )
  const n = new Map(sets.map((set) => [set, rows.filter((r) => r.set === set).length]))
  console.log(`| decision | ${sets.join(' | ')} | mean |`)
  for (const [name, m] of result) {
    const pct = sets.map((set) => (100 * (m.get(set) ?? 0)) / n.get(set)!)
    console.log(
      `| ${name} | ${pct.map((x) => x.toFixed(2)).join(' | ')} | ${(pct.reduce((a, b) => a + b, 0) / sets.length).toFixed(2)} |`,
    )
  }
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
    'train-share': { type: 'string', default: '0' },
    'cuts-only': { type: 'boolean', default: false },
    'cut-classifier': { type: 'boolean', default: false },
    census: { type: 'boolean', default: false },
    replay: { type: 'boolean', default: false },
    serving: { type: 'boolean', default: false },
    l2: { type: 'string', default: '0.001' },
  },
})
// The screen cuts with the rule planner's own breaks, at every separator (also those the planner
// glues back), and cleans each step as the planner does (loaded once the flags are read).
const { CLAUSE_BREAK, cleanStep, SENTENCE_BREAK } = await import('../src/plan/rule-planner.ts')
const ANCHORED_BREAK = new RegExp(`^${CLAUSE_BREAK.source}`, 'iu')
const { crossFitChoices, fitChoiceSoftmax, fnv1a, logit, sameIdSet, standardiser } =
  await import('./lib/choice-screen.ts')
const dump: Dump =
  values.from !== undefined
    ? (JSON.parse(readFileSync(values.from, 'utf8')) as Dump)
    : await fitAndDump(
        values.data!,
        values.dump!,
        Number(values['max-full']),
        values.wide!,
        values['generate-only']!,
        Number(values['train-share']),
        values['cuts-only']!,
        values.census!,
        values.serving!,
      )
if (values['generate-only']) process.exit(0)
if (values.census) {
  census(dump)
  if (values.replay) await replay(dump)
  process.exit(0)
}
ceilings(dump)
if (values['cut-classifier']) cutClassifier(dump, Number(values.iterations), Number(values.l2))
else chooser(dump, Number(values.iterations), values.near!)
