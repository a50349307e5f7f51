/**
 * A rebuild of a library builds the retriever parts it is asked for (`--retriever`, `?retriever=`,
 * default `retrieve.build`), not those of the index it replaces: a hybrid library uploaded again
 * without `?retriever=` comes back BM25 only, its default retriever changed and requests naming
 * its dense or hybrid parts refused. This says so, with the list that builds them again.
 */
import type { IndexManifest } from './manifest.ts'

type Parts = Pick<IndexManifest, 'retrievers' | 'defaultRetriever'>

/** The parts of an index as a retriever list that builds them again, its default first. */
export function retrieverPartList(parts: Parts): string {
  const names = Object.keys(parts.retrievers)
  return [parts.defaultRetriever, ...names.filter((name) => name !== parts.defaultRetriever)].join(
    ',',
  )
}

/**
 * A warning when the new index `next` of library `name` lacks retriever parts of the index it
 * replaces (`previous`), naming them and how to keep them (`option`: `?retriever=` or
 * `--retriever `, followed by the list); undefined when it keeps every part.
 */
export function droppedPartsWarning(
  name: string,
  previous: Parts | undefined,
  next: Parts,
  option: string,
): string | undefined {
  if (previous === undefined) return undefined
  const dropped = Object.keys(previous.retrievers).filter((part) => !(part in next.retrievers))
  if (dropped.length === 0) return undefined
  const defaultChange =
    previous.defaultRetriever === next.defaultRetriever
      ? ''
      : `; its default retriever is now ${next.defaultRetriever}, was ${previous.defaultRetriever}`
  return `Library "${name}" lost the retriever parts ${dropped.join(', ')}: this build made ${Object.keys(next.retrievers).join(', ')} (the parts asked for, default retrieve.build), not the parts of the index it replaced${defaultChange}. Requests naming a lost part are refused. To build them again: ${option}${retrieverPartList(previous)}.`
}
