// The source -> target id map of one (tenant, source environment, target environment) pair.
import type { EntityManager } from '@mikro-orm/postgresql'

export type CloneEntityType = 'meter' | 'pricing_unit' | 'feature' | 'plan' | 'price' | 'entitlement'

export interface ClonePair {
  tenant_id: string
  source_environment_id: string
  target_environment_id: string
}

const key = (type: CloneEntityType, sourceId: string) => `${type}:${sourceId}`

export class CloneMap {
  private readonly ids = new Map<string, string>()

  static async load(em: EntityManager, pair: ClonePair): Promise<CloneMap> {
    const rows = (await em.getConnection().execute(
      `SELECT entity_type, source_id, target_id FROM environment_clone_map
        WHERE tenant_id = ? AND source_environment_id = ? AND target_environment_id = ?`,
      [pair.tenant_id, pair.source_environment_id, pair.target_environment_id],
    )) as { entity_type: CloneEntityType; source_id: string; target_id: string }[]
    const map = new CloneMap()
    for (const r of rows) map.set(r.entity_type, r.source_id, r.target_id)
    return map
  }

  get(type: CloneEntityType, sourceId: string): string | undefined {
    return this.ids.get(key(type, sourceId))
  }

  set(type: CloneEntityType, sourceId: string, targetId: string): void {
    this.ids.set(key(type, sourceId), targetId)
  }

  /** the target id of a reference that must already be cloned */
  require(type: CloneEntityType, sourceId: string): string {
    const id = this.get(type, sourceId)
    if (!id) throw new Error(`environment clone: ${type} ${sourceId} has no target yet`)
    return id
  }
}

/**
 * Claims `sourceId` for `targetId` inside the caller's transaction. False: another run claimed
 * it first (this insert waited for that run's commit), and the caller must write nothing.
 */
export async function claim(tx: EntityManager, pair: ClonePair, type: CloneEntityType, sourceId: string, targetId: string, created: boolean): Promise<boolean> {
  const rows = await tx.getConnection().execute(
    `INSERT INTO environment_clone_map (tenant_id, source_environment_id, target_environment_id, entity_type, source_id, target_id, created)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING target_id`,
    [pair.tenant_id, pair.source_environment_id, pair.target_environment_id, type, sourceId, targetId, created],
    'all',
    tx.getTransactionContext(),
  )
  return rows.length === 1
}

export async function claimedTarget(em: EntityManager, pair: ClonePair, type: CloneEntityType, sourceId: string): Promise<string | undefined> {
  const rows = (await em.getConnection().execute(
    `SELECT target_id FROM environment_clone_map
      WHERE tenant_id = ? AND source_environment_id = ? AND target_environment_id = ? AND entity_type = ? AND source_id = ?`,
    [pair.tenant_id, pair.source_environment_id, pair.target_environment_id, type, sourceId],
  )) as { target_id: string }[]
  return rows[0]?.target_id
}
