// Local calendar days in a project's timezone.
/** Midnight of the day `now` falls on in `timezone`, as an instant. */
export function localMidnight(now: Date, timezone: string): Date {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(now)
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value)
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'))
  const offset = wall - Math.floor(now.getTime() / 1000) * 1000
  return new Date(Date.UTC(get('year'), get('month') - 1, get('day')) - offset)
}
