import zxcvbn from 'zxcvbn'
import { ValidationError } from '../http/errors.js'

const MIN_LENGTH = 8
/** bcrypt's limit, which PostHog keeps for every hasher. */
const MAX_LENGTH = 72

/**
 * PostHog's password rules (Django's minimum length of 8, a maximum of 72, and zxcvbn's strength score of at least
 * 3 with its suggestions as the message). Throws a ValidationError on `attr`.
 */
export function validatePassword(password: string, attr = 'password', code = 'password_too_short'): void {
  if (password.length > MAX_LENGTH) {
    throw new ValidationError(`Ensure this field has no more than ${MAX_LENGTH} characters.`, attr, 'max_length')
  }
  if (password.length < MIN_LENGTH) {
    throw new ValidationError(
      `This password is too short. It must contain at least ${MIN_LENGTH} characters.`,
      attr,
      code,
    )
  }
  const result = zxcvbn(password)
  if (result.score < 3) {
    const advice = result.feedback.suggestions.map((s) => (s.endsWith('.') ? s : `${s}.`)).join(' ')
    throw new ValidationError(advice || 'This password is too weak.', attr, 'password_too_weak')
  }
}
