/**
 * An action's steps as one HogQL boolean expression over events (PostHog's `action_to_expr`): steps are ORed;
 * within a step, every set field must match. Pure.
 */
import { ValidationError } from '../http/errors.js'
import { escapeRegex, literal, propertiesToHogQL, selectorPattern } from '../queries/filters.js'
import type { ActionStep } from './schemas.js'

function matching(field: string, value: string, how: string | null | undefined, defaultHow: string): string {
  switch (how ?? defaultHow) {
    case 'exact':
      return `${field} = ${literal(value)}`
    case 'regex':
      return `ifNull(match(toString(${field}), ${literal(value)}), 0)`
    default:
      return `toString(${field}) LIKE ${literal(`%${value.replace(/[\\%_]/g, '\\$&')}%`)}`
  }
}

/** A pattern over `elements_chain` for an element attribute (`text`, `href`) with its matching mode. */
function chainMatch(attribute: 'text' | 'href', value: string, how: string | null | undefined): string {
  const mode = how ?? 'exact'
  const inner = mode === 'regex' ? value : mode === 'contains' ? `[^"]*${escapeRegex(value)}[^"]*` : escapeRegex(value)
  return `match(elements_chain, ${literal(`(?:^|;)[^;]*${attribute === 'href' ? '(?:attr__)?href' : 'text'}="${inner}"`)})`
}

export function stepToHogQL(step: ActionStep): string {
  const parts: string[] = []
  if (step.event) parts.push(`event = ${literal(step.event)}`)
  if (step.url) parts.push(matching("properties['$current_url']", step.url, step.url_matching, 'contains'))
  if (step.selector) parts.push(`match(elements_chain, ${literal(selectorPattern(step.selector))})`)
  if (step.tag_name)
    parts.push(`match(elements_chain, ${literal(`(?:^|;)${escapeRegex(step.tag_name)}(?:\\.|$|:|;)`)})`)
  if (step.text) parts.push(chainMatch('text', step.text, step.text_matching))
  if (step.href) parts.push(chainMatch('href', step.href, step.href_matching))
  const properties = propertiesToHogQL(step.properties ?? undefined)
  if (properties) parts.push(properties)
  return parts.length === 0 ? 'true' : parts.map((p) => `(${p})`).join(' AND ')
}

/** The action as one expression: any step matches (an action without steps matches nothing). */
export function actionToHogQL(steps: ActionStep[]): string {
  if (steps.length === 0) return 'false'
  return steps.map((s) => `(${stepToHogQL(s)})`).join(' OR ')
}

/** Validates steps as a request body part, naming the offending step. */
export function checkSteps(steps: ActionStep[]): void {
  steps.forEach((step, i) => {
    try {
      stepToHogQL(step)
    } catch (error) {
      if (error instanceof ValidationError) throw new ValidationError(error.detail, `steps__${i}`, error.code)
      throw error
    }
  })
}
