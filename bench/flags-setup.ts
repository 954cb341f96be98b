/** The /flags benchmark's data: 50 active flags (rollouts, person-property filters, multivariate, one cohort) and
 * stored persons created through capture, as production gets them. Shared by the benchmark and profiling runs. */
export const PERSONS = 2000

async function api(url: string, key: string, path: string, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  })
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<{ id: number }>
}

export async function setup(
  url: string,
  creds: { project_api_key: string; personal_api_key: string; project_id: number },
) {
  const base = `/api/projects/${creds.project_id}`
  const cohort = await api(url, creds.personal_api_key, `${base}/cohorts/`, {
    name: 'Pro users in Germany',
    filters: {
      properties: {
        type: 'AND',
        values: [
          {
            type: 'AND',
            values: [
              { key: 'plan', type: 'person', value: ['pro'], operator: 'exact' },
              { key: 'country', type: 'person', value: 'DE', operator: 'exact' },
            ],
          },
        ],
      },
    },
  })
  for (let i = 0; i < 50; i++) {
    const kind = i % 5
    const filters =
      kind === 0
        ? { groups: [{ properties: [], rollout_percentage: 10 + i }] }
        : kind === 1
          ? {
              groups: [
                {
                  properties: [{ key: 'plan', type: 'person', value: ['pro', 'enterprise'], operator: 'exact' }],
                  rollout_percentage: 100,
                },
              ],
            }
          : kind === 2
            ? {
                groups: [{ properties: [], rollout_percentage: 100 }],
                multivariate: {
                  variants: [
                    { key: 'control', rollout_percentage: 50 },
                    { key: 'test', rollout_percentage: 50 },
                  ],
                },
              }
            : kind === 3
              ? {
                  groups: [
                    {
                      properties: [{ key: 'email', type: 'person', value: '@example.com', operator: 'icontains' }],
                      rollout_percentage: 50,
                    },
                  ],
                }
              : i === 4
                ? {
                    groups: [
                      { properties: [{ key: 'id', type: 'cohort', value: cohort.id }], rollout_percentage: 100 },
                    ],
                  }
                : {
                    groups: [
                      {
                        properties: [{ key: 'age', type: 'person', value: 30, operator: 'gt' }],
                        rollout_percentage: 100,
                      },
                    ],
                  }
    await api(url, creds.personal_api_key, `${base}/feature_flags/`, {
      key: `flag-${i}`,
      name: `Flag ${i}`,
      filters,
      active: true,
    })
  }
  // Stored persons arrive the way they do in production: through capture.
  for (let start = 0; start < PERSONS; start += 500) {
    const batch = Array.from({ length: 500 }, (_, k) => {
      const i = start + k
      return {
        event: '$identify',
        distinct_id: `person-${i}`,
        properties: {
          $set: {
            plan: ['free', 'pro', 'enterprise'][i % 3],
            country: i % 2 ? 'DE' : 'US',
            email: `p${i}@example.com`,
            age: 20 + (i % 40),
          },
        },
      }
    })
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: creds.project_api_key, batch }),
    })
    if (res.status !== 200) throw new Error(`capture: ${res.status}`)
  }
}
