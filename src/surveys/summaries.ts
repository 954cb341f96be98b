// Offline summaries of survey answers, in place of PostHog's LLM calls: themes are the most frequent content words
// (English stop words removed, counted once per answer), each with a representative quote, and sentiment comes
// from the AFINN lexicon (`sentiment`). Same answers in, same text out: every ordering has a tie-break.
import Sentiment from 'sentiment'
import { removeStopwords } from 'stopword'

const analyzer = new Sentiment()
const EXTRA_STOP_WORDS = ['just', 'really', 'also', 'would', 'could', 'get', 'got', 'much', 'thing', 'things', 'lot']

export interface Theme {
  word: string
  count: number
  quote: string
}

export interface TextSummary {
  responses: number
  themes: Theme[]
  positive: number
  neutral: number
  negative: number
  averageScore: number
}

function words(text: string): string[] {
  const tokens = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []
  return removeStopwords(tokens)
    .filter((w) => w.length > 2 && !EXTRA_STOP_WORDS.includes(w) && !/^\d+$/.test(w))
    .map((w) => w.replace(/'s$/, ''))
}

const plainText = (value: unknown): string | null => {
  if (typeof value === 'string') return value.replace(/<[^>]*>/g, ' ').trim() || null
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return null
}

/** Themes, quotes and sentiment of free-text answers. */
export function summarizeTexts(answers: unknown[], maxThemes = 5): TextSummary {
  const texts = answers.map(plainText).filter((t): t is string => t !== null)
  const perAnswer = texts.map((text) => new Set(words(text)))
  const counts = new Map<string, number>()
  for (const set of perAnswer) for (const word of set) counts.set(word, (counts.get(word) ?? 0) + 1)
  const ranked = [...counts.entries()]
    .filter(([, n]) => n >= (texts.length >= 4 ? 2 : 1))
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, maxThemes)
  const themes = ranked.map(([word, count]) => {
    // The quote: among answers naming the theme, the one sharing most themes with the others, then the shortest.
    const candidates = texts
      .map((text, i) => ({ text, i, overlap: [...perAnswer[i]].filter((w) => counts.has(w)).length }))
      .filter((c) => perAnswer[c.i].has(word))
      .sort((a, b) => b.overlap - a.overlap || a.text.length - b.text.length || a.i - b.i)
    return { word, count, quote: candidates[0]?.text ?? '' }
  })
  let positive = 0
  let negative = 0
  let total = 0
  for (const text of texts) {
    const score = analyzer.analyze(text).comparative
    total += score
    if (score > 0.05) positive++
    else if (score < -0.05) negative++
  }
  return {
    responses: texts.length,
    themes,
    positive,
    neutral: texts.length - positive - negative,
    negative,
    averageScore: texts.length === 0 ? 0 : total / texts.length,
  }
}

const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 100))
const truncate = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export function mood(summary: Pick<TextSummary, 'positive' | 'negative' | 'responses'>): string {
  if (summary.responses === 0) return 'neutral'
  if (summary.positive > summary.negative * 2 && summary.positive * 2 >= summary.responses) return 'mostly positive'
  if (summary.negative > summary.positive * 2 && summary.negative * 2 >= summary.responses) return 'mostly negative'
  if (summary.positive === 0 && summary.negative === 0) return 'neutral'
  return 'mixed'
}

/** The markdown PostHog's per-question summary returns in `content`. */
export function summaryMarkdown(question: string, summary: TextSummary): string {
  const lines = [`**${summary.responses} responses** to "${truncate(question, 120)}" — sentiment ${mood(summary)}`]
  lines.push(
    '',
    `- Positive: ${summary.positive} (${percent(summary.positive, summary.responses)}%)`,
    `- Neutral: ${summary.neutral} (${percent(summary.neutral, summary.responses)}%)`,
    `- Negative: ${summary.negative} (${percent(summary.negative, summary.responses)}%)`,
  )
  if (summary.themes.length > 0) {
    lines.push('', '**Themes**', '')
    for (const theme of summary.themes) {
      lines.push(
        `- **${theme.word}** (${theme.count} mention${theme.count === 1 ? '' : 's'}): "${truncate(theme.quote)}"`,
      )
    }
  }
  return lines.join('\n')
}

export interface QuestionDigest {
  type: string
  /** Rating average, choice shares or open-text summary of the sampled responses. */
  average?: number | null
  topChoice?: { choice: string; share: number } | null
  text?: TextSummary
}

/** One sentence of at most 20 words over the sampled responses, as PostHog's headline is. */
export function headline(responses: number, digests: QuestionDigest[]): string {
  const parts: string[] = []
  for (const digest of digests) {
    if (digest.type === 'rating' && digest.average !== undefined && digest.average !== null) {
      parts.push(`average rating ${digest.average.toFixed(1)}`)
    } else if (digest.topChoice) {
      parts.push(`${digest.topChoice.share}% chose ${digest.topChoice.choice}`)
    } else if (digest.text && digest.text.responses > 0) {
      const theme = digest.text.themes[0]?.word
      parts.push(theme ? `${mood(digest.text)} feedback about ${theme}` : `${mood(digest.text)} feedback`)
    }
  }
  const sentence = `${responses} response${responses === 1 ? '' : 's'}${parts.length ? `: ${parts.join('; ')}` : ''}`
  const cut = sentence
    .split(/\s+/)
    .slice(0, 20)
    .join(' ')
    .replace(/[;:,]$/, '')
  return `${cut}.`
}
