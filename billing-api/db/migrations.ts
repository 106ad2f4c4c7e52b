// The foundation schema. Domains add their own migrations through their DomainModule.
import { sqlMigration } from '../module.js'

export const foundationMigrations = [
  sqlMigration('0001_foundation', new URL('./migrations/0001_foundation.sql', import.meta.url)),
]
