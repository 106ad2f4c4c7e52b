import { sqlMigration, type DomainModule } from '../module.js'
import { environmentCloneRoutes } from './routes.js'

export const environmentCloneModule: DomainModule = {
  name: 'environment-clone',
  entities: [],
  migrations: [sqlMigration('environment_clone_0001_map', new URL('./migrations/0001_environment_clone_map.sql', import.meta.url))],
  routes: environmentCloneRoutes,
}
