// Every screen of the app inside a project, in the order the navigation shows them. A screen is one module under
// screens/ with a default export, loaded on first visit (each its own chunk). Add a screen here and nowhere else.
import type { ComponentType } from 'react'

export interface ScreenEntry {
  /** Below `/project/:projectId/`; may hold its own params (`persons/:personId`). */
  path: string
  /** Shown in the navigation when set (entries without it are detail pages reached by links). */
  nav?: { label: string; section: 'Product analytics' | 'Data' | 'Features' | 'Settings' }
  load: () => Promise<{ default: ComponentType }>
}

export const SCREENS: ScreenEntry[] = [
  {
    path: 'activity',
    nav: { label: 'Activity', section: 'Product analytics' },
    load: () => import('./screens/activity/Activity'),
  },
  {
    path: 'activity/:eventId',
    load: () => import('./screens/activity/EventDetail'),
  },
  {
    path: 'insights',
    nav: { label: 'Insights', section: 'Product analytics' },
    load: () => import('./screens/insights/Insights'),
  },
  {
    path: 'insights/new',
    load: () => import('./screens/insights/Insight'),
  },
  {
    path: 'insights/:shortId',
    load: () => import('./screens/insights/Insight'),
  },
  {
    path: 'sql',
    nav: { label: 'SQL editor', section: 'Product analytics' },
    load: () => import('./screens/sql/SqlEditor'),
  },
  {
    path: 'web-analytics',
    nav: { label: 'Web analytics', section: 'Product analytics' },
    load: () => import('./screens/web-analytics/WebAnalytics'),
  },
  {
    path: 'dashboards',
    nav: { label: 'Dashboards', section: 'Product analytics' },
    load: () => import('./screens/dashboards/Dashboards'),
  },
  {
    path: 'dashboards/:dashboardId',
    load: () => import('./screens/dashboards/Dashboard'),
  },
  {
    path: 'persons',
    nav: { label: 'Persons', section: 'Product analytics' },
    load: () => import('./screens/persons/Persons'),
  },
  {
    path: 'persons/:personId',
    load: () => import('./screens/persons/Person'),
  },
  {
    path: 'groups/:groupTypeIndex',
    load: () => import('./screens/persons/Groups'),
  },
  {
    path: 'groups/:groupTypeIndex/:groupKey',
    load: () => import('./screens/persons/Group'),
  },
  {
    path: 'data-management/events',
    nav: { label: 'Data management', section: 'Data' },
    load: () => import('./screens/data-management/EventDefinitions'),
  },
  {
    path: 'data-management/properties',
    load: () => import('./screens/data-management/PropertyDefinitions'),
  },
  {
    path: 'data-management/actions',
    load: () => import('./screens/data-management/Actions'),
  },
  {
    path: 'data-management/actions/:actionId',
    load: () => import('./screens/data-management/ActionEditor'),
  },
  {
    path: 'endpoints',
    nav: { label: 'Endpoints', section: 'Data' },
    load: () => import('./screens/endpoints/Endpoints'),
  },
  {
    path: 'endpoints/new',
    load: () => import('./screens/endpoints/NewEndpoint'),
  },
  {
    path: 'endpoints/:name',
    load: () => import('./screens/endpoints/Endpoint'),
  },
  {
    path: 'cohorts',
    nav: { label: 'Cohorts', section: 'Data' },
    load: () => import('./screens/data-management/Cohorts'),
  },
  {
    path: 'cohorts/:cohortId',
    load: () => import('./screens/data-management/CohortEditor'),
  },
  {
    path: 'settings/project',
    nav: { label: 'Project', section: 'Settings' },
    load: () => import('./screens/settings/ProjectSettings'),
  },
  {
    path: 'settings/personal-api-keys',
    nav: { label: 'Personal API keys', section: 'Settings' },
    load: () => import('./screens/settings/PersonalApiKeys'),
  },
  {
    path: 'feature_flags',
    nav: { label: 'Feature flags', section: 'Features' },
    load: () => import('./screens/feature-flags/FeatureFlags'),
  },
  {
    path: 'feature_flags/new',
    load: () => import('./screens/feature-flags/FeatureFlag'),
  },
  {
    path: 'feature_flags/:id',
    load: () => import('./screens/feature-flags/FeatureFlag'),
  },
  {
    path: 'experiments',
    nav: { label: 'Experiments', section: 'Features' },
    load: () => import('./screens/experiments/Experiments'),
  },
  {
    path: 'experiments/new',
    load: () => import('./screens/experiments/Experiment'),
  },
  {
    path: 'experiments/:id',
    load: () => import('./screens/experiments/Experiment'),
  },
  {
    path: 'surveys',
    nav: { label: 'Surveys', section: 'Features' },
    load: () => import('./screens/surveys/Surveys'),
  },
  {
    path: 'surveys/new',
    load: () => import('./screens/surveys/Survey'),
  },
  {
    path: 'surveys/:id',
    load: () => import('./screens/surveys/Survey'),
  },
  {
    path: 'settings/members',
    nav: { label: 'Members', section: 'Settings' },
    load: () => import('./screens/settings/Members'),
  },
  {
    path: 'settings/account',
    nav: { label: 'Account', section: 'Settings' },
    load: () => import('./screens/settings/Account'),
  },
]
