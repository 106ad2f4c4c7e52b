// afterCommit on a real Postgres transaction: committed, rolled back, nested (savepoint).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { MikroORM } from '@mikro-orm/postgresql'
import { loadConfig } from '../../platform/config.js'
import { openOrm } from '../database.js'
import { afterCommit } from './after-commit.js'

let orm: MikroORM
before(async () => {
  orm = await openOrm(loadConfig(process.env).databaseUrl, 2)
})
after(async () => {
  await orm?.close()
})

const select1 = (em: Parameters<typeof afterCommit>[0]) => em.getConnection().execute('SELECT 1', [], 'all', em.getTransactionContext())

test('runs once the transaction committed, not before', async () => {
  let runs = 0
  await orm.em.fork().transactional(async (tx) => {
    await select1(tx)
    afterCommit(tx, () => runs++)
    await Promise.resolve()
    assert.equal(runs, 0, 'not while the transaction is open')
  })
  await new Promise((r) => setImmediate(r))
  assert.equal(runs, 1)
})

test('never runs for a rolled back transaction', async () => {
  let runs = 0
  await assert.rejects(
    orm.em.fork().transactional(async (tx) => {
      await select1(tx)
      afterCommit(tx, () => runs++)
      throw new Error('abort')
    }),
    /abort/,
  )
  await new Promise((r) => setImmediate(r))
  assert.equal(runs, 0)
})

test('inside a savepoint it waits for the outer commit, and a rolled back outer cancels it', async () => {
  let runs = 0
  await assert.rejects(
    orm.em.fork().transactional(async (outer) => {
      await outer.transactional(async (inner) => {
        await select1(inner)
        afterCommit(inner, () => runs++)
      })
      await new Promise((r) => setImmediate(r))
      assert.equal(runs, 0, 'the savepoint was released, the transaction is still open')
      throw new Error('abort outer')
    }),
    /abort outer/,
  )
  await new Promise((r) => setImmediate(r))
  assert.equal(runs, 0)
  await orm.em.fork().transactional(async (outer) => {
    await outer.transactional(async (inner) => {
      await select1(inner)
      afterCommit(inner, () => runs++)
    })
  })
  await new Promise((r) => setImmediate(r))
  assert.equal(runs, 1)
})

test('outside a transaction it runs at once', () => {
  let runs = 0
  afterCommit(orm.em.fork(), () => runs++)
  assert.equal(runs, 1)
})
