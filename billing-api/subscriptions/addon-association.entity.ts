import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, text, timestamp, type BaseRecord } from '../db/common.js'

/** An add-on attached to a subscription; its line items carry addon_association_id. */
export interface AddonAssociation extends BaseRecord {
  subscription_id: string
  addon_id: string
  start_date: Date
  /** the attachment's effective end (also the end_date of its line items); null: open-ended */
  end_date: Date | null
  addon_status: 'active' | 'cancelled'
  cancelled_at: Date | null
}

export const AddonAssociationSchema = new EntitySchema<AddonAssociation>({
  name: 'AddonAssociation',
  tableName: 'addon_associations',
  properties: {
    ...baseColumns<AddonAssociation>(),
    subscription_id: text(),
    addon_id: text(),
    start_date: timestamp(),
    end_date: timestamp(true),
    addon_status: text(),
    cancelled_at: timestamp(true),
  },
})
