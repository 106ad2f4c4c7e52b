import { EntitySchema } from '@mikro-orm/core'
import { tenantWideColumns, json, text, type BaseRecord } from '../db/common.js'

/** A service account (spec: users). Its environment_id column is unused: users span the tenant. */
export interface User extends Omit<BaseRecord, 'environment_id'> {
  name: string | null
  email: string | null
  type: 'service_account' | 'user'
  roles: string[]
}

export const UserSchema = new EntitySchema<User>({
  name: 'User',
  tableName: 'users',
  properties: { ...tenantWideColumns<User>(), name: text(true), email: text(true), type: text(), roles: json() },
})
