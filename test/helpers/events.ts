import type { EventRow } from '../../src/ingest/committer.js'

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000'

/** An events-table row as capture writes it: the given fields over empty ones. */
export function eventRow(fields: Partial<EventRow> & Pick<EventRow, 'uuid'>): EventRow {
  return {
    team_id: 1,
    event: 'e',
    distinct_id: 'u',
    person_id: ZERO_UUID,
    properties: '{}',
    timestamp: '2026-11-22 10:00:00.000000',
    created_at: '2026-11-22 10:00:00.000000',
    elements_chain: '',
    $session_id: '',
    $window_id: '',
    $group_0: '',
    $group_1: '',
    $group_2: '',
    $group_3: '',
    $group_4: '',
    ...fields,
  }
}
