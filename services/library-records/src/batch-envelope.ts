import { KindGuard, type TArray, type TObject, type TSchema } from '@sinclair/typebox'

/** What a batch body schema of @lr/proto says about its envelope; the items are checked one by one. */
export interface BatchEnvelope {
  /** The one field holding the items (`qrcodes`). */
  key: string
  /** Also a bare array of items (a union of the array and the object). */
  bareArray: boolean
  minItems: number
  maxItems: number
  /** The schema of one item: the kind's create body. */
  item: TSchema
}

/** Reads the envelope from `{ [key]: T.Array(item, limits) }`, or a union of it with that array. */
export function batchEnvelopeOf(schema: TSchema): BatchEnvelope {
  const variants: TSchema[] = KindGuard.IsUnion(schema) ? schema.anyOf : [schema]
  const object = variants.find((v): v is TObject => KindGuard.IsObject(v))
  const [key, items] = Object.entries(object?.properties ?? {})[0] ?? []
  if (!key || !KindGuard.IsArray(items)) throw new Error('a batch schema is an object with one array field')
  const array = items as TArray
  return {
    key,
    bareArray: variants.some((v) => KindGuard.IsArray(v)),
    minItems: array.minItems ?? 1,
    maxItems: array.maxItems ?? Number.POSITIVE_INFINITY,
    item: array.items,
  }
}
