import { describe, expect, it } from 'vitest'
import { LATEST_VERSIONS, upgradeQuery } from '../../src/queries/upgrade.js'

describe('query node upgrades', () => {
  it('knows the latest version of every migrated kind', () => {
    expect(LATEST_VERSIONS).toEqual({
      RetentionQuery: 2,
      TrendsQuery: 5,
      StickinessQuery: 5,
      LifecycleQuery: 2,
      CalendarHeatmapQuery: 2,
      FunnelsQuery: 2,
      DataVisualizationNode: 2,
    })
  })

  it.each([
    [
      'retention showMean true becomes simple mean retention',
      { kind: 'RetentionQuery', retentionFilter: { showMean: true, period: 'Day' } },
      { kind: 'RetentionQuery', version: 2, retentionFilter: { meanRetentionCalculation: 'simple', period: 'Day' } },
    ],
    [
      'retention showMean false becomes none, an explicit calculation wins',
      { kind: 'RetentionQuery', retentionFilter: { showMean: false, meanRetentionCalculation: 'weighted' } },
      { kind: 'RetentionQuery', version: 2, retentionFilter: { meanRetentionCalculation: 'weighted' } },
    ],
    [
      'trends hidden legend indexes become hidden position customizations',
      { kind: 'TrendsQuery', series: [], trendsFilter: { hiddenLegendIndexes: [0, 2] } },
      {
        kind: 'TrendsQuery',
        version: 5,
        series: [],
        trendsFilter: {
          resultCustomizationBy: 'position',
          resultCustomizations: {
            '0': { assignmentBy: 'position', hidden: true },
            '2': { assignmentBy: 'position', hidden: true },
          },
        },
      },
    ],
    [
      'series items get their kind from their shape',
      {
        kind: 'TrendsQuery',
        series: [
          { event: '$pageview' },
          { id: 7 },
          { table_name: 'stripe', id: 'x' },
          { kind: 'EventsNode', event: null },
        ],
      },
      {
        kind: 'TrendsQuery',
        version: 5,
        series: [
          { kind: 'EventsNode', event: '$pageview' },
          { kind: 'ActionsNode', id: 7 },
          { kind: 'DataWarehouseNode', table_name: 'stripe', id: 'x' },
          { kind: 'EventsNode', event: null },
        ],
      },
    ],
    [
      'funnel series and exclusions get kinds, exclusions never warehouse nodes',
      {
        kind: 'FunnelsQuery',
        series: [{ event: 'a' }, { table_name: 't' }],
        funnelsFilter: { exclusions: [{ id: 3, funnelFromStep: 0, funnelToStep: 1 }, { table_name: 't' }] },
      },
      {
        kind: 'FunnelsQuery',
        version: 2,
        series: [
          { kind: 'EventsNode', event: 'a' },
          { kind: 'FunnelsDataWarehouseNode', table_name: 't' },
        ],
        funnelsFilter: {
          exclusions: [
            { kind: 'ActionsNode', id: 3, funnelFromStep: 0, funnelToStep: 1 },
            { kind: 'EventsNode', table_name: 't' },
          ],
        },
      },
    ],
    [
      'compare labels leave customization keys, the current period wins',
      {
        kind: 'TrendsQuery',
        version: 2,
        compareFilter: { compare: true },
        trendsFilter: {
          resultCustomizations: {
            '{"series":0,"compare_label":"current"}': { assignmentBy: 'value', color: 'red' },
            '{"series":0,"compare_label":"previous"}': { assignmentBy: 'value', color: 'blue' },
          },
        },
      },
      {
        kind: 'TrendsQuery',
        version: 5,
        compareFilter: { compare: true },
        trendsFilter: { resultCustomizations: { '{"series":0}': { assignmentBy: 'value', color: 'red' } } },
      },
    ],
    [
      'position customizations of the previous period shift onto the base series',
      {
        kind: 'TrendsQuery',
        version: 2,
        series: [{ kind: 'EventsNode' }, { kind: 'EventsNode' }],
        compareFilter: { compare: true },
        trendsFilter: {
          resultCustomizationBy: 'position',
          resultCustomizations: {
            '0': { assignmentBy: 'position', color: 'a' },
            '2': { assignmentBy: 'position', color: 'b' },
            '3': { assignmentBy: 'position', color: 'c' },
          },
        },
      },
      {
        kind: 'TrendsQuery',
        version: 5,
        series: [{ kind: 'EventsNode' }, { kind: 'EventsNode' }],
        compareFilter: { compare: true },
        trendsFilter: {
          resultCustomizationBy: 'position',
          resultCustomizations: {
            '0': { assignmentBy: 'position', color: 'a' },
            '1': { assignmentBy: 'position', color: 'c' },
          },
        },
      },
    ],
    [
      'customizations of the other mode are dropped',
      {
        kind: 'StickinessQuery',
        version: 4,
        stickinessFilter: {
          resultCustomizations: { a: { assignmentBy: 'position' }, b: { assignmentBy: 'value' }, c: {} },
        },
      },
      {
        kind: 'StickinessQuery',
        version: 5,
        stickinessFilter: { resultCustomizations: { b: { assignmentBy: 'value' }, c: {} } },
      },
    ],
    [
      'pie total moves under chartSettings.pie',
      {
        kind: 'DataVisualizationNode',
        source: { kind: 'HogQLQuery', query: 'select 1' },
        chartSettings: { showPieTotal: true },
      },
      {
        kind: 'DataVisualizationNode',
        version: 2,
        source: { kind: 'HogQLQuery', query: 'select 1' },
        chartSettings: { pie: { showTotal: true } },
      },
    ],
  ])('%s', (_name, input, expected) => {
    expect(upgradeQuery(input)).toEqual(expected)
  })

  it('upgrades nodes nested anywhere and leaves the input untouched', () => {
    const input = {
      kind: 'InsightVizNode',
      source: { kind: 'LifecycleQuery', series: [{ event: '$pageview' }] },
      extra: [{ kind: 'RetentionQuery', retentionFilter: { showMean: true } }],
    }
    const copy = structuredClone(input)
    const out = upgradeQuery(input)
    expect(input).toEqual(copy)
    expect(out.source).toEqual({
      kind: 'LifecycleQuery',
      version: 2,
      series: [{ kind: 'EventsNode', event: '$pageview' }],
    })
    expect(out.extra[0]).toMatchObject({ version: 2, retentionFilter: { meanRetentionCalculation: 'simple' } })
  })

  it('leaves latest-version nodes, kinds without migrations and non-string kinds alone', () => {
    const latest = { kind: 'TrendsQuery', version: 5, trendsFilter: { hiddenLegendIndexes: [1] } }
    expect(upgradeQuery(latest)).toEqual(latest)
    const plain = { kind: 'HogQLQuery', query: 'select 1', values: { kind: 7 } }
    expect(upgradeQuery(plain)).toEqual(plain)
    expect(upgradeQuery([1, 'x', null])).toEqual([1, 'x', null])
  })
})
