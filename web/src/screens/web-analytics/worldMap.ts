// The world map for the countries panel, registered with ECharts as `world` on first use. Loaded lazily in a chunk
// of its own (about 110 KB of outlines), so no other screen pays for it.
//
// Outlines: the `world-atlas` package (countries-110m.json, ISC licence, © Mike Bostock), TopoJSON built from
// Natural Earth's 1:110m Admin 0 countries, which are in the public domain (naturalearthdata.com). They are turned
// into GeoJSON with `topojson-client` (ISC) and keyed by ISO 3166-1 alpha-2 code — what `$geoip_country_code`
// holds — through the numeric codes of `iso-3166-1` (MIT).

import { MapChart } from 'echarts/charts'
import { GeoComponent } from 'echarts/components'
import { whereNumeric } from 'iso-3166-1'
import { feature } from 'topojson-client'
import type { GeometryCollection, Topology } from 'topojson-specification'
import atlas from 'world-atlas/countries-110m.json'
import { loadECharts } from '../../components/charts/Chart'

export const WORLD = 'world'

let registered: Promise<void> | null = null

type Ring = number[][]

/**
 * A ring that crosses the antimeridian (Fiji, Chukotka) jumps from +180 to -180 and would be drawn as a stripe
 * across the world: its points on the side with fewer of them are pinned to the edge of the other side.
 */
function unwrap(ring: Ring): Ring {
  if (!ring.some((p, i) => i > 0 && Math.abs(p[0] - ring[i - 1][0]) > 180)) return ring
  const east = ring.filter((p) => p[0] > 0).length >= ring.length / 2
  return ring.map(([lon, lat]) => [east && lon < 0 ? 180 : !east && lon > 0 ? -180 : lon, lat])
}

function unwrapGeometry(geometry: { type: string; coordinates: unknown }) {
  if (geometry.type === 'Polygon') return { ...geometry, coordinates: (geometry.coordinates as Ring[]).map(unwrap) }
  if (geometry.type === 'MultiPolygon') {
    return { ...geometry, coordinates: (geometry.coordinates as Ring[][]).map((polygon) => polygon.map(unwrap)) }
  }
  return geometry
}

/** Registers the `world` map with ECharts once; each country's `iso_a2` property is its alpha-2 code. */
export function registerWorldMap(): Promise<void> {
  registered ??= (async () => {
    const echarts = await loadECharts()
    echarts.use([MapChart, GeoComponent])
    const topology = atlas as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>
    const countries = feature(topology, topology.objects.countries)
    const features = countries.features
      // Antarctica has no visitors to show and would take a fifth of the height
      .filter((f) => f.properties?.name !== 'Antarctica')
      .map((f) => {
        const code = f.id === undefined ? undefined : whereNumeric(String(f.id))?.alpha2
        return {
          ...f,
          geometry: unwrapGeometry(f.geometry as { type: string; coordinates: unknown }),
          properties: { name: f.properties?.name ?? '', iso_a2: code ?? `x-${f.properties?.name}` },
        }
      })
    echarts.registerMap(WORLD, { type: 'FeatureCollection', features } as never)
  })()
  return registered
}
