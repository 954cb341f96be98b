import { describe, expect, it } from 'vitest'
import { createShapeMemory } from '../../src/ingest/event-shapes.js'
import type { NormalizedEvent } from '../../src/ingest/normalize.js'

function event(
  name: string,
  properties: Record<string, unknown>,
  setProps: Record<string, unknown> = {},
  setOnceProps: Record<string, unknown> = {},
): NormalizedEvent {
  return {
    uuid: '00000000-0000-4000-8000-000000000000',
    event: name,
    distinctId: 'u',
    properties,
    timestamp: new Date(0),
    setProps,
    setOnceProps,
    unsetProps: [],
    sessionId: null,
    windowId: null,
    groups: {},
    elementsChain: '',
    processPerson: true,
  }
}

/** An event (name and properties, project 1, hour 0) and whether the memory should find it new. */
type Step = [name: string, properties: Record<string, unknown>, isNew: boolean]

describe('event shape memory', () => {
  it('knows a shape once seen in the same project and hour, whatever the values', () => {
    const shapes = createShapeMemory()
    expect(shapes.isNew(1, event('$pageview', { $browser: 'Chrome', n: 1 }), 10)).toBe(true)
    expect(shapes.isNew(1, event('$pageview', { $browser: 'Firefox', n: 2 }), 10)).toBe(false)
    expect(shapes.isNew(2, event('$pageview', { $browser: 'Firefox', n: 2 }), 10)).toBe(true)
    expect(shapes.isNew(1, event('$pageview', { $browser: 'Firefox', n: 2 }), 11)).toBe(true)
  })

  it('tells apart names, keys, the kind of a value and where a key sits', () => {
    const shapes = createShapeMemory()
    const seen = (ev: NormalizedEvent) => !shapes.isNew(1, ev, 0)
    expect(seen(event('a', { x: 'v' }))).toBe(false)
    expect(seen(event('b', { x: 'v' }))).toBe(false)
    expect(seen(event('a', { y: 'v' }))).toBe(false)
    expect(seen(event('a', { x: 'v', y: 'v' }))).toBe(false)
    // A value that types where an earlier one did not (object, null) must be learned again.
    expect(seen(event('a', { x: { nested: true } }))).toBe(false)
    expect(seen(event('a', { x: null }))).toBe(false)
    expect(seen(event('a', { x: 3 }))).toBe(false)
    expect(seen(event('a', { x: true }))).toBe(false)
    // The same key as an event property, in $set, or in $set_once teaches different definitions.
    expect(seen(event('a', {}, { x: 'v' }))).toBe(false)
    expect(seen(event('a', {}, {}, { x: 'v' }))).toBe(false)
    expect(seen(event('a', { $group_type: 'company', $group_set: { x: 'v' } }))).toBe(false)
    expect(seen(event('a', { $group_type: 'org', $group_set: { x: 'v' } }))).toBe(false)
    // And every one of them is known the second time.
    expect(seen(event('a', { x: 'w' }))).toBe(true)
    expect(seen(event('a', {}, {}, { x: 'w' }))).toBe(true)
    expect(seen(event('a', { $group_type: 'org', $group_set: { x: 'w' } }))).toBe(true)
  })

  // With room for four names: new names fill the numbering, and the next event starts it over.
  it.each<[string, Step[]]>([
    [
      // `b`/`y` may get the numbers `a`/`x` had.
      'forgets every shape when its name numbering starts over, so no new shape passes for an old one',
      [
        ['a', { x: 'v' }, true],
        ['a', { x: 'v' }, false],
        ['c', { z: 'v' }, true],
        ['b', { y: 'v' }, true],
        ['a', { x: 'v' }, true],
      ],
    ],
    [
      // In the third event `a` is known and `w` is new: a start-over between them would give `w` the number `a` keeps.
      'never starts the numbering over inside one event, where old and new numbers would mix',
      [
        ['a', { x: 'v' }, true],
        ['c', { z: 'v' }, true],
        ['a', { w: 'v' }, true],
        ['w', { w: 'v' }, true],
        ['w', { w: 'v' }, false],
      ],
    ],
  ])('%s', (_title, steps) => {
    const shapes = createShapeMemory({ maxTokens: 4 })
    const answers = steps.map(([name, properties]) => shapes.isNew(1, event(name, properties), 0))
    expect(answers).toEqual(steps.map((step) => step[2]))
  })

  it('bounds the shapes remembered per project', () => {
    const shapes = createShapeMemory({ maxShapesPerProject: 3 })
    for (const name of ['a', 'b', 'c']) expect(shapes.isNew(1, event(name, {}), 0)).toBe(true)
    expect(shapes.isNew(1, event('a', {}), 0)).toBe(false)
    expect(shapes.isNew(1, event('d', {}), 0)).toBe(true)
    expect(shapes.isNew(1, event('a', {}), 0)).toBe(true)
  })
})
