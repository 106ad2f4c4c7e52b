// Mixed write-path versions in one consumer group would break exactly-once (an older
// aggregator neither holds the shard fence nor reads the markers). The group protocol name
// (ASSIGNER_NAME in consumer.ts) differs from the earlier version's, so Kafka itself refuses to
// seat the two in one group (INCONSISTENT_GROUP_PROTOCOL); and a database already on this
// version refuses an older schema reader here.
import type { Kafka } from 'kafkajs'
import type pg from 'pg'

export const WRITE_PATH_VERSION = 2

export class WritePathVersionError extends Error {}

export async function checkWritePathVersion(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ version: number }>('SELECT version FROM write_path_version WHERE id = 1').catch((err: unknown) => {
    // Only a missing table says the migrations did not run; anything else (a connection timeout
    // while Postgres restarts) is the caller's to retry.
    if ((err as { code?: string }).code !== '42P01') throw err
    throw new WritePathVersionError(`the write path's Postgres tables are missing; run the migrations first (npm run up does): ${String(err)}`)
  })
  const version = rows[0]?.version ?? 0
  if (version > WRITE_PATH_VERSION) {
    throw new WritePathVersionError(
      `this database is on write path version ${version}, newer than this aggregator (${WRITE_PATH_VERSION}); upgrade every aggregator of the group`,
    )
  }
}

/**
 * Refuses to join a consumer group whose members speak another protocol (an aggregator of the
 * earlier write path uses kafkajs' RoundRobinAssigner; this one `protocol`). Kafka refuses such
 * a mix too (INCONSISTENT_GROUP_PROTOCOL); this says why, in words, before trying.
 */
export async function checkGroupProtocol(kafka: Kafka, groupId: string, protocol: string): Promise<void> {
  const admin = kafka.admin({ retry: { retries: 2 } })
  try {
    await admin.connect()
    const described = await admin.describeGroups([groupId]).catch((err: unknown) => {
      // The local mock broker has no DescribeGroups: the protocol name alone guards there.
      if (/does not support the requested API/.test(String((err as Error).message))) return undefined
      throw err
    })
    const group = described?.groups[0]
    if (group && group.members.length > 0 && group.protocol && group.protocol !== protocol) {
      throw new WritePathVersionError(
        `consumer group ${groupId} has ${group.members.length} member(s) of another aggregator version (protocol ${group.protocol}, this one ${protocol}): ` +
        'an older and a newer write path in one group would count events twice; stop the older aggregators first (npm run down drains them)',
      )
    }
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}
