// Validators and serializers compiled on first use behave as the compiled ones, errors included.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Ajv } from 'ajv'
import { compileAllDeferred, serializerOnFirstUse, validatorOnFirstUse } from './compile-on-first-use.js'

test('a validator is compiled on its first call, once, and reports its errors where fastify reads them', () => {
  let compiled = 0
  const validate = validatorOnFirstUse(() => {
    compiled++
    return new Ajv().compile({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } })
  })
  assert.equal(compiled, 0)
  assert.equal(validate({ b: 1 }), false)
  assert.match(JSON.stringify(validate.errors), /must have required property 'a'/)
  assert.equal(validate({ a: 'x' }), true)
  assert.equal(validate.errors, null)
  assert.equal(compiled, 1)
})

test('compileAllDeferred compiles what was not used yet and throws what a compile throws', () => {
  compileAllDeferred()
  let compiled = 0
  const serialize = serializerOnFirstUse(() => {
    compiled++
    return (data) => JSON.stringify(data)
  })
  validatorOnFirstUse(() => {
    throw new Error('schema is invalid: nope')
  })
  assert.throws(() => compileAllDeferred(), /nope/)
  assert.equal(compiled, 1)
  assert.equal(serialize({ a: 1 }), '{"a":1}')
  assert.equal(compiled, 1)
  assert.equal(compileAllDeferred(), 0)
})
