// The survey as posthog-js shows it on a customer's page: its popover (a bordered card with the survey's colours,
// a close button, the question, its input and the submit button, "Survey by PostHog" below), drawn here in React
// from the draft so every change shows at once. It can be clicked through: submitting goes to the next question
// and, after the last, to the thank-you message when the survey shows one.
import { Box, Group, SegmentedControl, Stack, Text } from '@mantine/core'
import { type CSSProperties, useEffect, useState } from 'react'
import { type Appearance, contrastText, DEFAULT_APPEARANCE, type Question, ratingValues } from './model'

const FACES: Record<number, { label: string; mouth: string }[]> = {
  3: [
    { label: 'Dissatisfied', mouth: 'M8 17 Q12 13 16 17' },
    { label: 'Neutral', mouth: 'M8 15.5 H16' },
    { label: 'Satisfied', mouth: 'M8 14 Q12 18 16 14' },
  ],
  5: [
    { label: 'Very dissatisfied', mouth: 'M7 18 Q12 12 17 18' },
    { label: 'Dissatisfied', mouth: 'M8 17 Q12 14 16 17' },
    { label: 'Neutral', mouth: 'M8 15.5 H16' },
    { label: 'Satisfied', mouth: 'M8 14 Q12 17 16 14' },
    { label: 'Very satisfied', mouth: 'M7 13.5 Q12 19.5 17 13.5' },
  ],
}

function Face({ mouth, color }: { mouth: string; color: string }) {
  return (
    <svg width="36" height="36" viewBox="0 0 24 24" fill="none" stroke={color} strokeWidth="1.5" aria-hidden>
      <circle cx="12" cy="12" r="10" />
      <circle cx="9" cy="9.5" r="0.8" fill={color} />
      <circle cx="15" cy="9.5" r="0.8" fill={color} />
      <path d={mouth} strokeLinecap="round" />
    </svg>
  )
}

export function SurveyPreview({
  questions,
  appearance,
  focus = 0,
}: {
  questions: Question[]
  appearance: Appearance
  /** The question being edited: the preview turns to it. */
  focus?: number
}) {
  const [step, setStep] = useState(focus)
  useEffect(() => setStep(focus), [focus])
  const [selected, setSelected] = useState<Record<number, unknown>>({})
  const thankYou = appearance.displayThankYouMessage !== false
  const last = questions.length - 1 + (thankYou ? 1 : 0)
  useEffect(() => {
    if (step > last) setStep(Math.max(0, last))
  }, [step, last])

  const a = { ...DEFAULT_APPEARANCE, ...Object.fromEntries(Object.entries(appearance).filter(([, v]) => v !== '')) }
  const text = appearance.textColor || contrastText(a.backgroundColor)
  const options = [
    ...questions.map((q, i) => ({ value: String(i), label: `Q${i + 1}`, title: q.question })),
    ...(thankYou ? [{ value: 'thanks', label: 'Thank you' }] : []),
  ]
  const onThanks = thankYou && step === questions.length
  const question = questions[Math.min(step, questions.length - 1)]
  const index = Math.min(step, questions.length - 1)

  const card: CSSProperties = {
    position: 'relative',
    width: '100%',
    maxWidth: 300,
    background: a.backgroundColor,
    color: text,
    border: `1.5px solid ${a.borderColor}`,
    borderRadius: 10,
    boxShadow: '0 4px 12px rgba(0, 0, 0, 0.15)',
    padding: '20px 24px',
    fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    fontSize: 14,
  }
  const submit: CSSProperties = {
    width: '100%',
    padding: '10px 12px',
    marginTop: 12,
    border: 0,
    borderRadius: 6,
    background: a.submitButtonColor,
    color: appearance.submitButtonTextColor || contrastText(a.submitButtonColor),
    fontWeight: 600,
    cursor: 'pointer',
    fontSize: 14,
  }
  const next = () => setStep((s) => Math.min(s + 1, last))

  return (
    <Stack gap="sm" data-testid="survey-preview">
      <Group justify="space-between" align="center">
        <Text fw={600} size="sm" id="preview-heading">
          Preview
        </Text>
        {options.length > 1 ? (
          <SegmentedControl
            size="xs"
            aria-label="Previewed step"
            data={options.map((o) => ({ value: o.value, label: o.label }))}
            value={onThanks ? 'thanks' : String(index)}
            onChange={(v) => setStep(v === 'thanks' ? questions.length : Number(v))}
          />
        ) : null}
      </Group>
      <Box
        role="region"
        aria-labelledby="preview-heading"
        p="md"
        style={{
          background: 'repeating-linear-gradient(45deg, #f8f9fa, #f8f9fa 10px, #f1f3f5 10px, #f1f3f5 20px)',
          borderRadius: 8,
          display: 'flex',
          justifyContent: a.position === 'left' ? 'flex-start' : a.position === 'center' ? 'center' : 'flex-end',
        }}
      >
        <div style={card} data-testid="preview-popover">
          <button
            type="button"
            aria-label="Close survey"
            style={{
              position: 'absolute',
              top: -12,
              right: -12,
              width: 24,
              height: 24,
              borderRadius: '50%',
              border: `1.5px solid ${a.borderColor}`,
              background: a.backgroundColor,
              color: text,
              cursor: 'pointer',
              lineHeight: '18px',
              padding: 0,
            }}
            onClick={() => setStep(0)}
          >
            ×
          </button>
          {questions.length === 0 ? (
            <p style={{ margin: 0 }}>Add a question to see it here.</p>
          ) : onThanks ? (
            <div style={{ textAlign: 'center' }}>
              <h3 style={{ margin: '0 0 8px', fontSize: 16 }}>{a.thankYouMessageHeader}</h3>
              {appearance.thankYouMessageDescription ? (
                <p style={{ margin: 0 }}>{appearance.thankYouMessageDescription}</p>
              ) : null}
              <button type="button" style={submit} onClick={() => setStep(0)}>
                {(appearance.thankYouMessageCloseButtonText as string) || 'Close'}
              </button>
            </div>
          ) : question ? (
            <QuestionBody
              question={question}
              index={index}
              appearance={a}
              textColor={text}
              submitStyle={submit}
              submitText={
                // posthog-js: the question's own text; a rating falls back on the survey's, then "Submit".
                question.buttonText ||
                (question.type === 'rating' ? appearance.submitButtonText : undefined) ||
                'Submit'
              }
              selected={selected[index]}
              onSelect={(v) => setSelected({ ...selected, [index]: v })}
              onSubmit={next}
            />
          ) : null}
          {appearance.whiteLabel ? null : (
            <p style={{ margin: '12px 0 0', fontSize: 11, textAlign: 'center', color: text }}>Survey by PostHog</p>
          )}
        </div>
      </Box>
    </Stack>
  )
}

function QuestionBody({
  question,
  index,
  appearance,
  textColor,
  submitStyle,
  submitText,
  selected,
  onSelect,
  onSubmit,
}: {
  question: Question
  index: number
  appearance: typeof DEFAULT_APPEARANCE & Appearance
  textColor: string
  submitStyle: CSSProperties
  submitText: string
  selected: unknown
  onSelect: (value: unknown) => void
  onSubmit: () => void
}) {
  const id = `preview-q${index}`
  const input: CSSProperties = {
    width: '100%',
    boxSizing: 'border-box',
    border: `1.5px solid ${appearance.borderColor}`,
    borderRadius: 6,
    padding: 10,
    fontSize: 14,
    background: '#ffffff',
    color: '#020617',
    fontFamily: 'inherit',
  }
  return (
    <div>
      <h3 id={id} style={{ margin: '0 0 4px', fontSize: 16, fontWeight: 600, paddingRight: 8 }}>
        {question.question || 'Your question'}
        {question.optional ? <span style={{ fontWeight: 400, fontSize: 12 }}> (optional)</span> : null}
      </h3>
      {question.description ? <p style={{ margin: '0 0 10px' }}>{question.description}</p> : null}
      <div style={{ marginTop: 10 }}>
        {question.type === 'open' ? (
          <textarea
            aria-labelledby={id}
            rows={4}
            placeholder={appearance.placeholder}
            style={{ ...input, resize: 'vertical' }}
          />
        ) : question.type === 'rating' ? (
          <Rating
            question={question}
            appearance={appearance}
            textColor={textColor}
            selected={selected}
            onSelect={onSelect}
          />
        ) : question.type === 'single_choice' || question.type === 'multiple_choice' ? (
          <fieldset style={{ border: 0, margin: 0, padding: 0 }} aria-labelledby={id}>
            {(question.choices ?? []).map((choice, i) => {
              const multi = question.type === 'multiple_choice'
              const open = question.hasOpenChoice && i === (question.choices ?? []).length - 1
              const values = Array.isArray(selected) ? selected : []
              const checked = multi ? values.includes(i) : selected === i
              return (
                <label
                  // biome-ignore lint/suspicious/noArrayIndexKey: choices may repeat while typed
                  key={i}
                  style={{
                    display: 'flex',
                    alignItems: 'center',
                    gap: 8,
                    padding: '8px 10px',
                    marginBottom: 6,
                    border: `1.5px solid ${checked ? textColor : appearance.borderColor}`,
                    borderRadius: 6,
                    cursor: 'pointer',
                    background: '#ffffff',
                    color: '#020617',
                  }}
                >
                  <input
                    type={multi ? 'checkbox' : 'radio'}
                    name={id}
                    checked={checked}
                    onChange={() => onSelect(multi ? (checked ? values.filter((v) => v !== i) : [...values, i]) : i)}
                  />
                  <span>
                    {choice || `Choice ${i + 1}`}
                    {open ? ':' : ''}
                  </span>
                  {open ? (
                    <input
                      type="text"
                      aria-label={`${choice || 'Other'} - please specify`}
                      style={{ ...input, padding: 4, flex: 1 }}
                    />
                  ) : null}
                </label>
              )
            })}
          </fieldset>
        ) : null}
      </div>
      {question.type === 'link' ? (
        <button type="button" style={submitStyle} onClick={onSubmit}>
          {question.buttonText || 'Submit'}
        </button>
      ) : (
        <button type="button" style={submitStyle} onClick={onSubmit}>
          {submitText}
        </button>
      )}
    </div>
  )
}

function Rating({
  question,
  appearance,
  textColor,
  selected,
  onSelect,
}: {
  question: Question
  appearance: typeof DEFAULT_APPEARANCE & Appearance
  textColor: string
  selected: unknown
  onSelect: (value: unknown) => void
}) {
  const scale = question.scale ?? 5
  const labels = (
    <div style={{ display: 'flex', justifyContent: 'space-between', fontSize: 12, marginTop: 6 }}>
      <span>{question.lowerBoundLabel}</span>
      <span>{question.upperBoundLabel}</span>
    </div>
  )
  if (question.display === 'emoji') {
    const faces = FACES[scale] ?? FACES[5]
    return (
      <div>
        <div style={{ display: 'flex', justifyContent: 'space-between' }}>
          {faces.map((face, i) => {
            const active = selected === i + 1
            return (
              <button
                type="button"
                key={face.label}
                aria-label={face.label}
                aria-pressed={active}
                onClick={() => onSelect(i + 1)}
                style={{ background: 'none', border: 0, padding: 2, cursor: 'pointer', opacity: active ? 1 : 0.75 }}
              >
                <Face mouth={face.mouth} color={active ? appearance.ratingButtonActiveColor : textColor} />
              </button>
            )
          })}
        </div>
        {labels}
      </div>
    )
  }
  const values = ratingValues(scale)
  return (
    <div>
      <div
        style={{
          display: 'grid',
          gridTemplateColumns: `repeat(${values.length}, 1fr)`,
          border: `1.5px solid ${appearance.borderColor}`,
          borderRadius: 6,
          overflow: 'hidden',
        }}
      >
        {values.map((v, i) => {
          const active = selected === v
          const bg = active ? appearance.ratingButtonActiveColor : appearance.ratingButtonColor
          return (
            <button
              type="button"
              key={v}
              aria-pressed={active}
              onClick={() => onSelect(v)}
              style={{
                padding: '8px 0',
                border: 0,
                borderLeft: i === 0 ? 0 : `1px solid ${appearance.borderColor}`,
                background: bg,
                color: contrastText(bg),
                cursor: 'pointer',
                fontSize: 13,
                fontWeight: 600,
              }}
            >
              {v}
            </button>
          )
        })}
      </div>
      {labels}
    </div>
  )
}
