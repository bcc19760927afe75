/**
 * The answer of a single create, with `Location` of the record it made (docs/decisions.md §10):
 * a path relative to this API (`collection` is the route's own, `/v1/qrcodes`), so it stays right
 * behind any proxy. A replayed create (same Idempotency-Key) answers the same record, so the same
 * Location. A batch gets none: one header cannot name many records, its body lists them.
 */
export async function locatedCreate<Record>(
  set: { headers: { [name: string]: unknown } },
  collection: string,
  idOf: (record: Record) => string,
  answer: Promise<{ created: Record[] }>,
) {
  const body = await answer
  if (body.created.length === 1) set.headers.location = `${collection}/${encodeURIComponent(idOf(body.created[0]!))}`
  return body
}
