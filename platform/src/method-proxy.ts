/** A method as a wrapper calls it: on what the call was made on, with its arguments. */
export type MethodCall = (self: unknown, args: unknown[]) => unknown

/**
 * `target` with each method (a function under a string name) replaced by what `wrap` makes of
 * it, made once per name; the call is made on the target itself when made on the proxy. Other
 * properties pass as they are. The store wrappers (store-metrics.ts, mongo-silence.ts) use it, so
 * no adapter carries their code.
 */
export function wrapMethods<S extends object>(target: S, wrap: (prop: string, method: (...args: unknown[]) => unknown) => MethodCall): S {
  const wrapped = new Map<string, unknown>()
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver)
      if (typeof value !== 'function' || typeof prop !== 'string') return value
      let fn = wrapped.get(prop)
      if (!fn) {
        const call = wrap(prop, value as (...args: unknown[]) => unknown)
        fn = function (this: unknown, ...args: unknown[]) {
          return call(this === receiver ? obj : this, args)
        }
        wrapped.set(prop, fn)
      }
      return fn
    },
  })
}
