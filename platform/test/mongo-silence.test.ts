import { expect, it } from 'bun:test'
import { createServerSilence, MongoServerSilentError, withSilenceBound } from '@lr/platform/mongo-silence'

// A replica set: the driver sends each call to a member that answers, so one frozen member (a
// secondary, or a primary about to be replaced) must not fail every call of the client.
it('takes the client as silent only while every server it heard from is, and tells its listeners once it becomes so', async () => {
  const silence = createServerSilence()
  const told: string[] = []
  silence.onSilent(() => told.push('silent'))
  const store = withSilenceBound({ find: async () => 'found', ping: async () => true }, silence)
  expect(silence.silent()).toBe(false) // nothing heard yet
  silence.set('db-1:27017', false)
  silence.set('db-2:27017', false)
  silence.set('db-2:27017', true)
  expect([silence.silent(), await store.find(), await store.ping()]).toEqual([false, 'found', true])
  silence.set('db-1:27017', true)
  expect([silence.silent(), told]).toEqual([true, ['silent']])
  await expect(store.find()).rejects.toBeInstanceOf(MongoServerSilentError)
  expect(await store.ping()).toBe(false)
  silence.set('db-1:27017', true) // a later unanswered check of the same outage
  expect(told).toEqual(['silent'])
  silence.set('db-2:27017', false)
  expect([silence.silent(), await store.find()]).toEqual([false, 'found'])
})

it('answers a synchronous method (a store clock) as it is while silent, and bounds a method seen to answer a promise', async () => {
  const silence = createServerSilence()
  const calls: string[] = []
  const target = {
    now: () => 1_700_000_000_000,
    // Not `async`, so told apart only by what it answers.
    find: () => (calls.push('find'), Promise.resolve('found')),
  }
  const store = withSilenceBound(target, silence)
  silence.set('db-1:27017', false)
  expect([store.now(), await store.find()]).toEqual([1_700_000_000_000, 'found'])
  silence.set('db-1:27017', true)
  // It had answered a rejected promise that nobody awaited: bun start ended on it.
  expect(store.now()).toBe(1_700_000_000_000)
  await expect(store.find()).rejects.toBeInstanceOf(MongoServerSilentError)
  expect(calls).toEqual(['find']) // not even begun while silent
})
