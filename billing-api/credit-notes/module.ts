import { sqlMigration, type DomainModule } from '../module.js'
import { CreditNoteLineItemSchema, CreditNoteSchema } from './credit-note.entity.js'
import { creditNoteSchema } from './response-schemas.js'
import { creditNoteRoutes } from './routes.js'

export const creditNotesModule: DomainModule = {
  name: 'credit-notes',
  entities: [CreditNoteSchema, CreditNoteLineItemSchema],
  migrations: [sqlMigration('credit_notes_0001_init', new URL('./migrations/0001_init.sql', import.meta.url))],
  schemas: [creditNoteSchema],
  routes: creditNoteRoutes,
}
