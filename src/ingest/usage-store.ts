import type { Kysely } from 'kysely'

export type UsageTables = {
  usage_events: {
    organization_id: string
    month: string
    billable_events: number
    historical_events: number
  }
}

export function createUsageStore(db: Kysely<any>) {
  const typed = db as unknown as Kysely<UsageTables>
  return {
    async add(organizationId: string, month: string, billable: number, historical: number) {
      await typed
        .insertInto('usage_events')
        .values({ organization_id: organizationId, month, billable_events: billable, historical_events: historical })
        .onConflict((oc) =>
          oc.columns(['organization_id', 'month']).doUpdateSet((eb) => ({
            billable_events: eb('usage_events.billable_events', '+', billable),
            historical_events: eb('usage_events.historical_events', '+', historical),
          })),
        )
        .execute()
    },
    get: (organizationId: string, month: string) =>
      typed
        .selectFrom('usage_events')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('month', '=', month)
        .executeTakeFirst(),
  }
}
export type UsageStore = ReturnType<typeof createUsageStore>
