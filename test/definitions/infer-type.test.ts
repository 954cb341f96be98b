import { describe, expect, it } from 'vitest'
import { detectPropertyType, type PropertyType } from '../../src/definitions/infer-type.js'

// 2024-06-01T12:00:00Z; six months earlier is 1_701_475_200.
const NOW = 1_717_243_200

const cases: [string, unknown, PropertyType | null][] = [
  // Key families that are always strings, whatever the value
  ['utm_source', 123, 'String'],
  ['UTM_Medium', true, 'String'],
  ['$initial_utm_campaign', 5, 'String'],
  ['$feature/new-nav', false, 'String'],
  ['$feature_flag_response', true, 'String'],
  ['$survey_response', 4, 'String'],
  ['$survey_response_2', '2024-01-01', 'String'],
  // Time-like keys with date-like strings
  ['created_at', '2024-01-01T00:00:00Z', 'DateTime'],
  ['signup_date', '2024/01/01', 'DateTime'],
  ['expires-at', '2024-01-01 10:00:00', 'DateTime'],
  // Time-like keys with unix timestamps no older than six months
  ['timestamp', 1_717_000_000, 'DateTime'],
  ['Event Time', 1_717_000_000_000, 'DateTime'],
  ['updatedAt', 1_701_475_200, 'DateTime'],
  ['seen-at', 1_717_000_000, 'DateTime'],
  ['timestamp', 1_701_475_199, 'Numeric'],
  ['timestamp', 1_600_000_000, 'Numeric'],
  ['timestamp', 1_717_000_000.5, 'Numeric'],
  ['timestamp', -1_717_000_000, 'Numeric'],
  ['count', 1_717_000_000, 'Numeric'],
  ['time', '1717000000', 'String'],
  // Booleans written as strings
  ['flag', 'true', 'Boolean'],
  ['flag', ' FALSE ', 'Boolean'],
  ['flag', 'True', 'String'],
  ['flag', 'yes', 'String'],
  // Date-like strings under any key
  ['name', '2024-01-01', 'DateTime'],
  ['name', '01-31-2024', 'DateTime'],
  ['name', '12/31/2024', 'DateTime'],
  ['name', '31/12/2024', 'String'], // the pattern wants the first field to start with 0-2
  ['name', '2024-01-01T10:00:00', 'DateTime'],
  ['name', '2024-01-01 10:00:00.123 UTC', 'DateTime'],
  ['name', ' 2024-01-01 ', 'DateTime'],
  ['name', '2024-06-01t12:00:00.5+05:30', 'DateTime'],
  ['name', '2024-13-01T00:00:00Z', 'DateTime'], // the prefix pattern does not check ranges
  ['name', '2024-1-01T00:00:00Z', 'String'],
  ['name', '2024-01-01T10:00', 'String'],
  ['name', 'Tue, 1 Jul 2003 10:52:37 +0200', 'DateTime'],
  ['name', '1 Jul 2003 10:52 GMT', 'DateTime'],
  ['name', 'Thu, 29 Feb 2024 10:00:00 PST', 'DateTime'],
  ['name', 'Wed, 29 Feb 2023 10:00:00 PST', 'String'],
  ['name', '32 Jan 2024 10:00:00 GMT', 'String'],
  ['name', 'Jul 1 2003', 'String'],
  // Plain values
  ['name', 'hello', 'String'],
  ['name', '', 'String'],
  ['name', '42', 'String'],
  ['name', 3.14, 'Numeric'],
  ['name', 0, 'Numeric'],
  ['name', true, 'Boolean'],
  ['name', false, 'Boolean'],
  ['name', null, null],
  ['name', [1, 2], null],
  ['name', { a: 1 }, null],
  ['created_at', null, null],
  ['created_at', { at: 1 }, null],
]

describe('detectPropertyType', () => {
  it.each(cases)('%s = %j → %s', (key, value, expected) => {
    expect(detectPropertyType(key, value, NOW)).toBe(expected)
  })

  it('judges unix timestamps against the clock it is given', () => {
    expect(detectPropertyType('sent_at', 1_600_000_000, 1_600_000_100)).toBe('DateTime')
    expect(detectPropertyType('sent_at', 1_600_000_000, NOW)).toBe('Numeric')
  })
})
