import { secondsSince, storeDuration } from './metrics'

/**
 * The store with every asynchronous port method timed into lr_store_operation_duration_seconds
 * (store, operation, outcome). Wrapped once where a service opens its store, so no adapter
 * carries metrics code; synchronous methods pass through untouched.
 */
export function withStoreMetrics<S extends object>(store: string, target: S): S {
  const wrapped = new Map<PropertyKey, unknown>()
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver)
      if (typeof value !== 'function' || typeof prop !== 'string') return value
      let fn = wrapped.get(prop)
      if (!fn) {
        fn = function (this: unknown, ...args: unknown[]) {
          const started = performance.now()
          const result = (value as (...a: unknown[]) => unknown).apply(this === receiver ? obj : this, args)
          if (!(result instanceof Promise)) return result
          return result.then(
            (ok) => {
              storeDuration.observe({ store, operation: prop, outcome: 'ok' }, secondsSince(started))
              return ok
            },
            (error) => {
              storeDuration.observe({ store, operation: prop, outcome: 'error' }, secondsSince(started))
              throw error
            },
          )
        }
        wrapped.set(prop, fn)
      }
      return fn
    },
  })
}
