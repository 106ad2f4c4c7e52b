import { userSchema, apiKeySchema, createdApiKeySchema } from './response-schemas.js'
import { sqlMigration, type DomainModule } from '../module.js'
import { ApiKeySchema } from './api-key.entity.js'
import { UserSchema } from './user.entity.js'

/** Routes are registered by app.ts: they need the authenticator's cache invalidation. */
export const authModule: DomainModule = {
  name: 'auth',
  entities: [UserSchema, ApiKeySchema],
  migrations: [
    sqlMigration('auth_0001_api_key_hash_scheme', new URL('./migrations/0001_api_key_hash_scheme.sql', import.meta.url)),
    sqlMigration('auth_0002_api_key_scope', new URL('./migrations/0002_api_key_scope.sql', import.meta.url)),
  ],
  schemas: [userSchema, apiKeySchema, createdApiKeySchema],
}
