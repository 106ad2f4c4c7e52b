// JSON schemas of the hierarchy request fields (hierarchy.ts, README.md "Hierarchies").
const id = { type: 'string', minLength: 1, maxLength: 100 } as const
export const customerIdList = { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: id } as const

/** Extra properties of POST /subscriptions. */
export const hierarchyCreateProperties = {
  inheritance: {
    type: 'object',
    additionalProperties: false,
    properties: {
      child_customer_ids: { ...customerIdList, minItems: 0 },
      child_external_customer_ids: { ...customerIdList, minItems: 0 },
    },
  },
  parent_subscription_id: id,
  invoicing_customer_id: id,
} as const

/** Body of POST /subscriptions/{id}/inherited. */
export const inheritedChangeBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    add_customer_ids: customerIdList,
    add_external_customer_ids: customerIdList,
    remove_customer_ids: customerIdList,
    remove_external_customer_ids: customerIdList,
    version: { type: 'integer', minimum: 1 },
  },
} as const
