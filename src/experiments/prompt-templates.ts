// The catalogue PostHog serves at `experiments/prompt_templates/`: the metric templates its `create_from_prompt`
// attaches to an experiment that compares versions of a stored LLM prompt. A fixed list, in PostHog's order; the
// keys are the ones that route accepts in `templates`.
export interface PromptTemplate {
  key: string
  label: string
  description: string
}

export const PROMPT_TEMPLATES: readonly PromptTemplate[] = Object.freeze([
  { key: 'cost', label: 'Cost', description: 'Compares LLM cost per user across prompt versions.' },
  { key: 'latency', label: 'Latency', description: 'Compares LLM response time per user across prompt versions.' },
  {
    key: 'eval_pass_rate',
    label: 'Eval pass rate',
    description: 'Compares the share of evaluations that pass across prompt versions.',
  },
])
