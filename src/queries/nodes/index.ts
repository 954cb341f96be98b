/** The insight node kinds, by kind: the query service runs them like its own (cache, refresh modes, async, log). */
import type { InsightDeps } from '../insights/context.js'
import type { NodeRunner } from '../runner.js'
import { createActorsRunners } from './actors.js'
import { createExperimentRunner } from './experiment.js'
import { createFunnelsRunner } from './funnels.js'
import { createLifecycleRunner } from './lifecycle.js'
import { createPathsRunner } from './paths.js'
import { createRetentionRunner } from './retention.js'
import { createSessionsRunner } from './sessions.js'
import { createStickinessRunner } from './stickiness.js'
import { createTrendsRunner } from './trends.js'
import { createWebOverviewRunner } from './web-overview.js'
import { createWebStatsTableRunner } from './web-stats-table.js'

export function createInsightRunners(deps: InsightDeps): Record<string, NodeRunner> {
  return {
    TrendsQuery: createTrendsRunner(deps),
    StickinessQuery: createStickinessRunner(deps),
    LifecycleQuery: createLifecycleRunner(deps),
    RetentionQuery: createRetentionRunner(deps),
    FunnelsQuery: createFunnelsRunner(deps),
    SessionsQuery: createSessionsRunner(deps),
    WebOverviewQuery: createWebOverviewRunner(deps),
    WebStatsTableQuery: createWebStatsTableRunner(deps),
    PathsQuery: createPathsRunner(deps),
    ...createActorsRunners(deps),
    ExperimentQuery: createExperimentRunner(deps),
  }
}
