// The HogQL editor: CodeMirror 6 with the SQL language in a HogQL dialect (ClickHouse words, backtick names),
// completion of tables, fields, functions and property names (`properties.` offers the project's event
// properties, `person.properties.` its person properties), Ctrl/Cmd+Enter to run, and the server's error marked
// where it is.
import type { Completion, CompletionSource } from '@codemirror/autocomplete'
import { keywordCompletionSource, SQLDialect, schemaCompletionSource } from '@codemirror/lang-sql'
import { defaultHighlightStyle, HighlightStyle, LanguageSupport, syntaxHighlighting } from '@codemirror/language'
import { setDiagnostics } from '@codemirror/lint'
import { EditorState, Prec } from '@codemirror/state'
import { EditorView, keymap, placeholder } from '@codemirror/view'
import { tags } from '@lezer/highlight'
import { Box } from '@mantine/core'
import { basicSetup } from 'codemirror'
import { useEffect, useRef } from 'react'
import { FUNCTIONS, TABLE_FUNCTIONS, TABLES } from './catalogue'

const KEYWORDS =
  'select from where group by order limit offset having join inner left right full outer cross on using as and ' +
  'or not in like ilike between case when then else end distinct with union all array interval is null true false ' +
  'asc desc nulls first last settings sample prewhere global any semi anti asof window over partition rows range ' +
  'preceding following current row unbounded filter by cube rollup totals ties fill step to except exists qualify'

/** HogQL as CodeMirror's SQL language sees it: ClickHouse's words, functions highlighted, `backtick` names. */
export const HogQLDialect = SQLDialect.define({
  keywords: KEYWORDS,
  builtin: [...FUNCTIONS, ...Object.keys(TABLE_FUNCTIONS)].map((f) => f.toLowerCase()).join(' '),
  types: 'string int integer float boolean bool date datetime uuid array tuple map nullable',
  identifierQuotes: '`',
  operatorChars: '*+-%<>!=&|/~^?',
  specialVar: '{',
  hashComments: false,
  doubleDollarQuotedStrings: false,
})

/** A name as it is written in HogQL: plain when it can be, else in backticks. */
export function hogqlName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``
}

/** CodeMirror's default colours, and function names in a colour of their own (the default leaves them plain). */
const functionHighlight = syntaxHighlighting(
  HighlightStyle.define([...defaultHighlightStyle.specs, { tag: tags.standard(tags.name), color: '#1864ab' }]),
)

/** The same words without the functions, for keyword completion (functions are completed with their case). */
const KeywordDialect = SQLDialect.define({
  keywords: KEYWORDS,
  types: 'string int integer float boolean date datetime',
})

const schema = Object.fromEntries(
  Object.entries(TABLES).map(([table, fields]) => [
    table,
    Object.entries(fields).map(([label, detail]): Completion => ({ label, detail, type: 'property' })),
  ]),
)

const FUNCTION_OPTIONS: Completion[] = [
  ...FUNCTIONS.map((label): Completion => ({ label, type: 'function', detail: 'function', boost: -1 })),
  ...Object.entries(TABLE_FUNCTIONS).map(
    ([label, columns]): Completion => ({ label, type: 'function', detail: `table function (${columns.join(', ')})` }),
  ),
]

export interface PropertyNames {
  event: string[]
  person: string[]
}

/** Functions everywhere a name may start; property names after `properties.` (person ones after `person.`). */
function hogqlSource(names: () => PropertyNames): CompletionSource {
  return (context) => {
    const property = context.matchBefore(/(?:\b(person|pdi\.person)\.)?\bproperties\.[\w$]*$/)
    if (property) {
      const from = property.from + property.text.lastIndexOf('.') + 1
      const scope = property.text.startsWith('person') || property.text.startsWith('pdi.') ? 'person' : 'event'
      return {
        from,
        options: names()[scope].map(
          (name): Completion => ({
            label: name,
            apply: hogqlName(name),
            type: 'variable',
            detail: `${scope} property`,
          }),
        ),
        validFor: /^[\w$]*$/,
      }
    }
    const word = context.matchBefore(/[\w$]+/)
    if (!word && !context.explicit) return null
    const from = word?.from ?? context.pos
    if (from > 0 && context.state.sliceDoc(from - 1, from) === '.') return null
    return { from, options: FUNCTION_OPTIONS, validFor: /^\w*$/ }
  }
}

export interface EditorError {
  /** offsets in the query text, as the server gives them */
  start: number
  end: number | null
  message: string
}

export interface HogQLEditorProps {
  initialValue: string
  onChange: (value: string) => void
  onRun: () => void
  propertyNames: PropertyNames
  error: EditorError | null
}

export function HogQLEditor({ initialValue, onChange, onRun, propertyNames, error }: HogQLEditorProps) {
  const host = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const latest = useRef({ onChange, onRun, propertyNames })
  latest.current = { onChange, onRun, propertyNames }

  // The view is made once; its callbacks read the latest props.
  // biome-ignore lint/correctness/useExhaustiveDependencies: initialValue seeds the editor only
  useEffect(() => {
    if (!host.current) return
    const data = HogQLDialect.language.data
    const language = new LanguageSupport(HogQLDialect.language, [
      data.of({ autocomplete: schemaCompletionSource({ dialect: HogQLDialect, schema, defaultTable: 'events' }) }),
      data.of({ autocomplete: keywordCompletionSource(KeywordDialect, true) }),
      data.of({ autocomplete: hogqlSource(() => latest.current.propertyNames) }),
    ])
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: initialValue,
        extensions: [
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: () => {
                  latest.current.onRun()
                  return true
                },
              },
            ]),
          ),
          basicSetup,
          functionHighlight,
          language,
          placeholder('SELECT event, count() FROM events GROUP BY event'),
          // long lines wrap: the editor grows instead of scrolling sideways
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': 'SQL query', 'data-testid': 'sql-input' }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString())
          }),
          EditorView.theme({
            '&': { fontSize: '14px', border: '1px solid var(--mantine-color-gray-4)', borderRadius: '6px' },
            '&.cm-focused': { outline: '2px solid var(--mantine-color-blue-5)', outlineOffset: '-1px' },
            '.cm-scroller': { fontFamily: 'var(--mantine-font-family-monospace)', minHeight: '180px' },
            '.cm-content': { minHeight: '180px' },
            '.cm-gutters': { color: '#495057', backgroundColor: '#f8f9fa' },
            '.cm-placeholder': { color: '#5c636a' },
          }),
        ],
      }),
    })
    view.current = editor
    return () => {
      editor.destroy()
      view.current = null
    }
  }, [])

  // The server's error, underlined at its position (CodeMirror shows the message on hover).
  useEffect(() => {
    const editor = view.current
    if (!editor) return
    const length = editor.state.doc.length
    const diagnostics = []
    if (error && error.start <= length) {
      let from = Math.max(0, error.start)
      let to = Math.min(length, Math.max(error.end ?? from + 1, from + 1))
      if (from === length && from > 0) {
        from -= 1
        to = length
      }
      diagnostics.push({ from, to, severity: 'error' as const, message: error.message })
    }
    editor.dispatch(setDiagnostics(editor.state, diagnostics))
  }, [error])

  return <Box ref={host} data-testid="sql-editor" />
}

/** 1-based line and column of an offset in a text. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset))
  const lines = before.split('\n')
  return { line: lines.length, column: lines[lines.length - 1].length + 1 }
}
