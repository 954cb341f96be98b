// The checks PostHog's survey serializer makes, with its messages. Field validators report their field as `attr`
// (`questions`, `appearance`, …); the cross-field checks of `validate()` report no attr, or the key of the dict
// they raise. HTML in texts is cleaned with an allow-list, as PostHog's nh3 call does.
import sanitizeHtml from 'sanitize-html'
import { ValidationError } from '../http/errors.js'

export const SURVEY_TYPES = ['popover', 'widget', 'external_survey', 'api'] as const
const QUESTION_TYPES = new Set(['open', 'link', 'rating', 'single_choice', 'multiple_choice'])
const BCP47 = /^[a-z]{2,3}(-[a-z0-9]{2,8}){0,3}$/
const REJECTED_TRANSLATION_KEYS = new Set(['default', 'original', 'base'])
const EMAIL_LINK = /^mailto:[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$/
const CONDITIONS_NOT_FOR_EXTERNAL = [
  'url',
  'urlMatchType',
  'selector',
  'seenSurveyWaitPeriodInDays',
  'linkedFlagVariant',
  'deviceTypes',
  'deviceTypesMatchType',
]

// biome-ignore format: PostHog's allow-list, kept compact
const ALLOWED_TAGS = [
  'a', 'abbr', 'acronym', 'area', 'article', 'aside', 'b', 'bdi', 'bdo', 'blockquote', 'br', 'caption', 'center',
  'cite', 'code', 'col', 'colgroup', 'data', 'dd', 'del', 'details', 'dfn', 'div', 'dl', 'dt', 'em', 'figcaption',
  'figure', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr', 'i', 'img', 'ins', 'kbd', 'li',
  'map', 'mark', 'nav', 'ol', 'p', 'pre', 'q', 'rp', 'rt', 'rtc', 'ruby', 's', 'samp', 'small', 'span', 'strike',
  'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'th', 'thead', 'time', 'tr', 'tt', 'u', 'ul', 'var',
  'wbr',
]

const CELL_ATTRIBUTES = ['abbr', 'align', 'axis', 'bgcolor', 'char', 'charoff', 'colspan', 'headers', 'height']
const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: {
    '*': ['style', 'lang', 'title', 'width', 'height'],
    a: ['href', 'hreflang', 'target', 'rel'],
    bdo: ['dir'],
    blockquote: ['cite'],
    col: ['align', 'char', 'charoff', 'span'],
    colgroup: ['align', 'char', 'charoff', 'span'],
    del: ['cite', 'datetime'],
    hr: ['align', 'size', 'width'],
    img: ['align', 'alt', 'height', 'src', 'width'],
    ins: ['cite', 'datetime'],
    ol: ['start', 'type'],
    q: ['cite'],
    table: ['align', 'bgcolor', 'border', 'cellpadding', 'cellspacing', 'frame', 'rules', 'summary', 'width'],
    td: [...CELL_ATTRIBUTES, 'nowrap', 'rowspan', 'scope', 'valign', 'width'],
    th: [...CELL_ATTRIBUTES, 'nowrap', 'rowspan', 'scope', 'valign', 'width'],
    tr: ['align', 'bgcolor', 'char', 'charoff', 'valign'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener' }) },
  allowedStyles: undefined,
}

const looksLikeHtml = (text: string) => /<[a-zA-Z!/?][^>]*>/.test(text)

/** Text with any HTML reduced to the allow-list; plain text is returned as given. */
export function cleanHtml(text: string): string {
  return looksLikeHtml(text) ? sanitizeHtml(text, SANITIZE_OPTIONS) : text
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const normalizeLanguage = (raw: string) => raw.trim().toLowerCase().replace(/_/g, '-')

function fail(message: string, attr: string | null, code = 'invalid_input'): never {
  throw new ValidationError(message, attr, code)
}

export function validateBaseLanguage(value: unknown): string {
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) return 'en'
  if (typeof value !== 'string') fail('base_language must be a string.', 'base_language')
  const normalized = normalizeLanguage(value)
  if (REJECTED_TRANSLATION_KEYS.has(normalized)) {
    fail(`'${value}' is not a valid language code. Use a BCP-47 code like 'en' or 'es'.`, 'base_language')
  }
  if (!BCP47.test(normalized)) {
    fail(`'${value}' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX'.`, 'base_language')
  }
  return normalized
}

function languageKey(raw: string, base: string, context: string, attr: string): string {
  if (raw.trim() === '') fail(`${context}: translation language code cannot be empty.`, attr)
  const normalized = normalizeLanguage(raw)
  if (REJECTED_TRANSLATION_KEYS.has(normalized)) {
    fail(
      `${context}: '${raw}' is not a valid translation language. The untranslated text is the original — set the survey's base language instead of adding it as a translation.`,
      attr,
    )
  }
  if (!BCP47.test(normalized)) {
    fail(
      `${context}: '${raw}' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX' (not language names like 'english').`,
      attr,
    )
  }
  if (normalized === base) {
    fail(
      `${context}: '${raw}' matches the survey's base language ('${base}'). The original text already covers this language — translate to a different language.`,
      attr,
    )
  }
  return normalized
}

/** Survey-level translations: `{lang: {name, description, thankYou…}}`; keys already stored are kept as they are. */
export function validateTranslations(
  value: unknown,
  base: string,
  existing: Record<string, unknown>,
): Record<string, Record<string, string>> | null {
  if (value === null || value === undefined) return null
  if (!isObject(value)) fail('Translations must be an object', 'translations')
  const out: Record<string, Record<string, string>> = {}
  for (const [raw, data] of Object.entries(value)) {
    if (!isObject(data)) fail(`Translation for '${raw}' must be an object`, 'translations')
    const cleaned: Record<string, string> = {}
    for (const field of [
      'name',
      'description',
      'thankYouMessageHeader',
      'thankYouMessageDescription',
      'thankYouMessageCloseButtonText',
    ]) {
      if (!(field in data)) continue
      const text = data[field]
      if (typeof text !== 'string') fail(`Translation for '${raw}': '${field}' must be a string`, 'translations')
      cleaned[field] = cleanHtml(text)
    }
    if (Object.keys(cleaned).length === 0) continue
    if (raw in existing) {
      out[raw] = cleaned
      continue
    }
    const key = languageKey(raw, base, 'Survey translation', 'translations')
    if (Object.keys(out).some((k) => normalizeLanguage(k) === key)) {
      fail(`Survey translation: '${raw}' collides with another translation for '${key}'.`, 'translations')
    }
    out[key] = cleaned
  }
  return out
}

function validateLink(link: string, attr: string): string {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(link)?.[1]?.toLowerCase() ?? ''
  if (scheme !== 'https' && scheme !== 'mailto')
    fail('Link must be a URL with one of these schemes: [https, mailto]', attr)
  if (scheme === 'mailto') {
    if (!EMAIL_LINK.test(link)) {
      fail('Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com).', attr)
    }
  } else if (!/^https:\/\/[^/?#\s]+/i.test(link)) {
    fail('Invalid HTTPS URL. Please enter a valid HTTPS link.', attr)
  }
  return cleanHtml(link)
}

function validateChoices(choices: unknown[], attr: string): string[] {
  return choices.map((choice) => {
    if (typeof choice !== 'string') fail('Question choices must be strings', attr)
    if (choice.trim() === '') fail('Question choices cannot be empty', attr)
    return cleanHtml(choice)
  })
}

function validateQuestionTranslations(
  value: unknown,
  index: number,
  base: string,
  existing: Record<string, unknown>,
): Record<string, Record<string, unknown>> {
  const n = index + 1
  const attr = 'questions'
  if (!isObject(value)) fail(`Question ${n}: translations must be an object`, attr)
  const out: Record<string, Record<string, unknown>> = {}
  for (const [raw, data] of Object.entries(value)) {
    if (!isObject(data)) fail(`Question ${n}: Translation for '${raw}' must be an object`, attr)
    const cleaned: Record<string, unknown> = {}
    for (const field of ['question', 'description', 'buttonText', 'lowerBoundLabel', 'upperBoundLabel']) {
      if (!(field in data)) continue
      const text = data[field]
      if (typeof text !== 'string') fail(`Question ${n}: Translation '${raw}' field '${field}' must be a string`, attr)
      cleaned[field] = cleanHtml(text)
    }
    if (data.link) {
      if (typeof data.link !== 'string') fail(`Question ${n}: Translation '${raw}' field 'link' must be a string`, attr)
      cleaned.link = validateLink(data.link, attr)
    }
    if ('choices' in data) {
      if (!Array.isArray(data.choices)) {
        fail(`Question ${n}: Translation '${raw}' field 'choices' must be a list of strings`, attr)
      }
      cleaned.choices = validateChoices(data.choices, attr)
    }
    if (Object.keys(cleaned).length === 0) continue
    if (raw in existing) {
      out[raw] = cleaned
      continue
    }
    const key = languageKey(raw, base, `Question ${n} translation`, attr)
    if (Object.keys(out).some((k) => normalizeLanguage(k) === key)) {
      fail(`Question ${n} translation: '${raw}' collides with another translation for '${key}'.`, attr)
    }
    out[key] = cleaned
  }
  return out
}

function validateOpenRules(rules: unknown, attr: string): void {
  if (!Array.isArray(rules)) fail('Question validation must be a list of validation rules', attr)
  const types = ['min_length', 'max_length', 'email']
  for (const rule of rules) {
    if (!isObject(rule)) fail('Each validation rule must be an object', attr)
    if (!types.includes(rule.type as string)) fail(`Validation rule type must be one of: ${types.join(', ')}`, attr)
    if ((rule.type === 'min_length' || rule.type === 'max_length') && rule.value !== null && rule.value !== undefined) {
      if (!Number.isInteger(rule.value) || (rule.value as number) <= 0) {
        fail(`Validation rule value for ${rule.type} must be a positive integer`, attr)
      }
    }
  }
  const ruleValue = (type: string) => (rules as Record<string, unknown>[]).find((r) => r.type === type)?.value
  const min = ruleValue('min_length')
  const max = ruleValue('max_length')
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    fail('Minimum length cannot be greater than maximum length', attr)
  }
}

function validateBranching(branching: unknown, attr: string): void {
  if (branching === undefined || branching === null) return
  if (!isObject(branching)) fail('Question branching must be an object', attr)
  switch (branching.type) {
    case 'next_question':
    case 'end':
      return
    case 'specific_question':
      if (!Number.isInteger(branching.index) || (branching.index as number) < 0) {
        fail('Question branching index must be a non-negative integer', attr)
      }
      return
    case 'response_based':
      if (!isObject(branching.responseValues)) fail('Question branching responseValues must be an object', attr)
      for (const target of Object.values(branching.responseValues)) {
        if (target !== 'end' && !(Number.isInteger(target) && (target as number) >= 0)) {
          fail("Question branching targets must be a question index or 'end'", attr)
        }
      }
      return
    default:
      fail('Question branching type must be one of: next_question, end, specific_question, response_based', attr)
  }
}

/** PostHog's `validate_questions`: question text, types, choices, links, open-text rules, translations. */
export function validateQuestions(value: unknown, base: string, existing: unknown[]): Record<string, unknown>[] | null {
  if (value === null || value === undefined) return null
  const attr = 'questions'
  if (!Array.isArray(value)) fail('Questions must be a list of objects', attr)
  return value.map((raw, index) => {
    if (!isObject(raw)) fail('Questions must be a list of objects', attr)
    const cleaned: Record<string, unknown> = { ...raw }
    const text = raw.question
    if (!text) fail('Question text is required', attr)
    if (typeof text !== 'string') fail('Question text must be a string', attr)
    cleaned.question = cleanHtml(text)
    if (raw.type !== undefined && !QUESTION_TYPES.has(raw.type as string)) {
      fail(`Question type must be one of: ${[...QUESTION_TYPES].join(', ')}`, attr)
    }
    if (raw.description) {
      if (typeof raw.description !== 'string') fail('Question description must be a string', attr)
      cleaned.description = cleanHtml(raw.description)
    }
    for (const field of ['buttonText', 'lowerBoundLabel', 'upperBoundLabel']) {
      const fieldValue = raw[field]
      if (!fieldValue) continue
      if (typeof fieldValue !== 'string') fail(`Question ${field} must be a string`, attr)
      cleaned[field] = cleanHtml(fieldValue)
    }
    if (raw.choices) {
      if (!Array.isArray(raw.choices)) fail('Question choices must be a list of strings', attr)
      cleaned.choices = validateChoices(raw.choices, attr)
    }
    const contentType = raw.descriptionContentType
    if (contentType && contentType !== 'text' && contentType !== 'html') {
      fail("Question descriptionContentType must be one of ['text', 'html']", attr)
    }
    if ('translations' in raw) {
      const before = existing[index]
      const previous = isObject(before) && isObject(before.translations) ? before.translations : {}
      const translations = validateQuestionTranslations(raw.translations, index, base, previous)
      const original = cleaned.choices
      for (const [lang, data] of Object.entries(translations)) {
        if (!('choices' in data)) continue
        if (!Array.isArray(original)) {
          delete data.choices
          continue
        }
        const translated = data.choices as unknown[]
        if (translated.length !== original.length) {
          fail(
            `Question ${index + 1}: Translation '${lang}' has ${translated.length} choices but question has ${original.length} choices. Array lengths must match to avoid partial translations.`,
            attr,
          )
        }
      }
      cleaned.translations = translations
    }
    if (raw.link) {
      if (typeof raw.link !== 'string') fail(`Question ${index + 1}: link must be a string`, attr)
      cleaned.link = validateLink(raw.link, attr)
    }
    if (raw.validation !== undefined && raw.validation !== null) validateOpenRules(raw.validation, attr)
    validateBranching(raw.branching, attr)
    return cleaned
  })
}

/** PostHog's `validate_appearance`. */
export function validateAppearance(value: unknown, canWhiteLabel: boolean): Record<string, unknown> | null {
  if (value === null || value === undefined) return null
  const attr = 'appearance'
  if (!isObject(value)) fail('Appearance must be an object', attr)
  const out = { ...value }
  for (const field of ['thankYouMessageHeader', 'thankYouMessageDescription', 'thankYouMessageCloseButtonText']) {
    if (typeof out[field] === 'string' && out[field]) out[field] = cleanHtml(out[field] as string)
  }
  const contentType = out.thankYouMessageDescriptionContentType
  if (contentType && contentType !== 'text' && contentType !== 'html') {
    fail("thankYouMessageDescriptionContentType must be one of ['text', 'html']", attr)
  }
  const delay = out.surveyPopupDelaySeconds
  if (typeof delay === 'number' && delay < 0) fail('Survey popup delay seconds must be a positive integer', attr)
  if (out.whiteLabel !== undefined && out.whiteLabel !== null && typeof out.whiteLabel !== 'boolean') {
    fail('whiteLabel must be a boolean', attr)
  }
  if (out.whiteLabel === true && !canWhiteLabel) {
    fail('You need to upgrade to PostHog Enterprise to use white labelling', attr)
  }
  return out
}

/** PostHog's `validate_conditions`, plus the action ids it links (`conditions.actions.values[].id`). */
export function validateConditions(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null
  if (!isObject(value)) fail('Conditions must be an object', 'conditions')
  const wait = value.seenSurveyWaitPeriodInDays
  if (wait !== undefined && wait !== null && !(Number.isInteger(wait) && (wait as number) >= 0)) {
    fail('seenSurveyWaitPeriodInDays must be a non-negative integer', 'conditions')
  }
  return value
}

export function actionIdsOf(conditions: Record<string, unknown> | null): number[] {
  const actions = conditions?.actions
  if (!isObject(actions) || !Array.isArray(actions.values)) return []
  return actions.values
    .filter((v): v is Record<string, unknown> => isObject(v) && 'id' in v)
    .map((v) => Number(v.id))
    .filter((id) => Number.isSafeInteger(id))
}

export function validateSchedule(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value !== 'once' && value !== 'recurring' && value !== 'always') {
    fail('Schedule must be one of: once, recurring, always', 'schedule')
  }
  return value
}

/** Filters that roll out to everyone are refused: a targeting flag must target someone. */
export function checkTargetingFilters(filters: unknown): void {
  if (!isObject(filters)) return
  const groups = Array.isArray(filters.groups) ? filters.groups : []
  const everyone = groups.some((group) => {
    if (!isObject(group)) return false
    const rollout = group.rollout_percentage
    const properties = Array.isArray(group.properties) ? group.properties : []
    return (rollout === 100 || rollout === null || rollout === undefined) && properties.length === 0
  })
  if (everyone) {
    fail(
      'Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting',
      null,
    )
  }
}

/** The rules `external_survey` adds (errors keyed by field, the first reported). */
export function checkExternalSurvey(input: {
  linked_flag_id?: unknown
  targeting_flag_filters?: unknown
  conditions: Record<string, unknown> | null
  appearance: Record<string, unknown> | null
}): void {
  for (const field of ['linked_flag_id', 'targeting_flag_filters'] as const) {
    if (input[field] !== undefined && input[field] !== null) fail(`${field} is not allowed for external surveys`, field)
  }
  const conditions = input.conditions
  if (conditions) {
    const bad = CONDITIONS_NOT_FOR_EXTERNAL.filter((f) => f in conditions && conditions[f] !== null)
    for (const field of ['actions', 'events']) {
      const part = conditions[field]
      if (isObject(part) && Array.isArray(part.values) && part.values.length > 0) bad.push(field)
    }
    if (bad.length > 0) {
      fail(`The following condition fields are not allowed for external surveys: ${bad.join(', ')}`, 'conditions')
    }
  }
  if (input.appearance && 'surveyPopupDelaySeconds' in input.appearance) {
    if (input.appearance.surveyPopupDelaySeconds !== null) {
      fail('surveyPopupDelaySeconds is not allowed for external surveys', 'appearance')
    }
  }
}

export function checkShuffleWithBranching(
  appearance: Record<string, unknown> | null,
  questions: Record<string, unknown>[] | null,
): void {
  if (!appearance?.shuffleQuestions || !questions) return
  if (questions.some((q) => q.branching !== undefined && q.branching !== null)) {
    fail(
      'Question shuffling and question branching cannot be used together. Please disable one of these features.',
      null,
    )
  }
}
