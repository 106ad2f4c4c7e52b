// System events reach the Kafka topic system_events through the outbox, and an event written
// in a transaction that rolled back is never delivered.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Consumer } from 'kafkajs'
import { publishSystemEvent } from '../../billing-api/events/publish.js'
import { relaySystemEvents } from '../../billing-api/outbox/relay.js'
import type { SystemEventMessage } from '../../billing-api/events/publish.js'
import { createConsumer, createKafka, createProducer } from '../../platform/kafka.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { created } from '../support/fixtures.js'

let p: TestPlatform
let consumer: Consumer
const received: SystemEventMessage[] = []

before(async () => {
  p = await startTestPlatform({ services: ['billing-api'] })
  consumer = createConsumer(createKafka(p.config, 'system-events-test'), `${p.config.systemEventsTopic}-reader`)
  await consumer.connect()
  await consumer.subscribe({ topic: p.config.systemEventsTopic, fromBeginning: true })
  await consumer.run({ eachMessage: async ({ message }) => void received.push(JSON.parse(message.value!.toString())) })
})
after(async () => {
  await consumer?.disconnect()
  await p?.stop()
})

test('customer.created is delivered once; a rolled-back event never is', async () => {
  const t = await p.newTenant()
  const scope = { tenant_id: t.tenantId, environment_id: t.environments.production }
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme' }))

  await assert.rejects(
    p.ctx.orm.em.fork().transactional(async (em) => {
      publishSystemEvent(em, scope, { event_name: 'test.rolled_back', entity_type: 'test', entity_id: 'ghost' })
      await em.flush()
      throw new Error('roll back')
    }),
    /roll back/,
  )
  await p.ctx.orm.em.fork().transactional(async (em) => {
    publishSystemEvent(em, scope, { event_name: 'test.marker', entity_type: 'test', entity_id: 'marker' })
  })

  const producer = await createProducer(createKafka(p.config, 'system-events-relay'))
  try {
    assert.equal(await relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId: t.tenantId }), 2)
    assert.equal(await relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId: t.tenantId }), 0, 'published rows are not sent again')
  } finally {
    await producer.disconnect()
  }
  // Events of different entities may sit on different partitions: wait for both, compare without order.
  const arrived = (name: string) => received.some((e) => e.tenant_id === t.tenantId && e.event_name === name)
  await eventually(async () => (arrived('test.marker') && arrived('customer.created') ? true : undefined), 'the marker and customer events')
  const mine = received.filter((e) => e.tenant_id === t.tenantId).sort((a, b) => a.event_name.localeCompare(b.event_name))
  assert.deepEqual(mine.map((e) => e.event_name), ['customer.created', 'test.marker'])
  assert.equal(mine[0].entity_type, 'customer')
  assert.equal(mine[0].entity_id, customer.id)
  assert.equal(mine[0].environment_id, t.environments.production)
  assert.equal((mine[0].payload as { external_id?: string }).external_id, 'acme')
  assert.ok(!received.some((e) => e.entity_id === 'ghost'))
})
