/** The insight node kinds, by kind: the query service runs them like its own (cache, refresh modes, async, log). */
import type { InsightDeps } from '../insights/context.js'
import type { NodeRunner } from '../runner.js'
import { createFunnelsRunner } from './funnels.js'
import { createLifecycleRunner } from './lifecycle.js'
import { createRetentionRunner } from './retention.js'
import { createStickinessRunner } from './stickiness.js'
import { createTrendsRunner } from './trends.js'

export function createInsightRunners(deps: InsightDeps): Record<string, NodeRunner> {
  return {
    TrendsQuery: createTrendsRunner(deps),
    StickinessQuery: createStickinessRunner(deps),
    LifecycleQuery: createLifecycleRunner(deps),
    RetentionQuery: createRetentionRunner(deps),
    FunnelsQuery: createFunnelsRunner(deps),
  }
}
