import { Kafka, logLevel } from 'kafkajs'
const kafka = new Kafka({ brokers: [`127.0.0.1:${process.argv[2]}`], logLevel: logLevel.NOTHING })
const admin = kafka.admin()
await admin.connect()
const topics = await admin.listTopics()
console.log(topics.filter((t) => t.startsWith('meterline.gen')))


const hi = await admin.fetchTopicOffsets('events')
const [c] = await admin.fetchOffsets({ groupId: process.argv[3] ?? 'meterline-aggregator', topics: ['events'] })
for (const p of c.partitions.sort((a, b) => a.partition - b.partition)) console.log(p.partition, 'committed', p.offset, p.metadata, 'high', hi.find((h) => h.partition === p.partition)?.high)
const d = await admin.describeGroups([process.argv[3] ?? 'meterline-aggregator'])
console.log(JSON.stringify(d.groups.map((g) => ({ state: g.state, members: g.members.map((m) => m.clientId) }))))
await admin.disconnect()
