// Fastify compiles every route's validators and response serializers when the server gets
// ready: with the billing API's few hundred routes that is most of a start (about 5 s of CPU,
// fast-json-stringify and ajv), paid again by every restart. Compiled on a route's first use
// instead, a restart serves seconds sooner and a route costs a few milliseconds once.
// compileAllDeferred() compiles whatever has not been used yet: a test runs it so a schema
// that cannot compile still fails before it ships, not on its route's first request.

const pending = new Set<() => void>()

/** A validator (ajv's shape: `errors` set after a call that returned false) compiled on first call. */
export function validatorOnFirstUse<V extends ((data: unknown) => unknown) & { errors?: unknown }>(compile: () => V): V {
  let fn: V | undefined
  const force = () => {
    pending.delete(force)
    fn ??= compile()
    return fn
  }
  pending.add(force)
  const validate = (data: unknown) => {
    const f = fn ?? force()
    const result = f(data)
    validate.errors = f.errors
    return result
  }
  validate.errors = undefined as unknown
  return validate as unknown as V
}

/** A serializer compiled on first call. */
export function serializerOnFirstUse(compile: () => (data: unknown) => string): (data: unknown) => string {
  let fn: ((data: unknown) => string) | undefined
  const force = () => {
    pending.delete(force)
    fn ??= compile()
    return fn
  }
  pending.add(force)
  return (data) => (fn ?? force())(data)
}

/** Compiles every validator and serializer not used yet (throws what a compile throws); returns how many. */
export function compileAllDeferred(): number {
  const all = [...pending]
  for (const force of all) force()
  return all.length
}
