import type { Mail } from './mail.js'

/** The mails accounts send; plain text, each with the one link it is about. */
export const messages = {
  verifyEmail: (to: string, link: string): Mail => ({
    to,
    subject: 'Verify your email address',
    text: `Please confirm that ${to} is your email address by opening this link:\n\n${link}\n\nThe link expires in 24 hours. If you did not ask for this, you can ignore this mail.\n`,
  }),
  emailChanged: (to: string, newEmail: string): Mail => ({
    to,
    subject: 'Your Burrow email address was changed',
    text: `The email address of your Burrow account was changed from ${to} to ${newEmail}.\n\nIf you did not make this change, reset your password and contact your administrator.\n`,
  }),
  passwordReset: (to: string, link: string): Mail => ({
    to,
    subject: 'Reset your Burrow password',
    text: `Someone asked to reset the password of your Burrow account. To choose a new password, open this link:\n\n${link}\n\nThe link expires in 24 hours and works once. If you did not ask for this, you can ignore this mail.\n`,
  }),
  invite: (to: string, link: string, organization: string, inviter: string, message: string | null): Mail => ({
    to,
    subject: `${inviter} invited you to join ${organization} on Burrow`,
    text: `${inviter} invited you to join ${organization} on Burrow.${message ? `\n\n${message}` : ''}\n\nAccept the invite:\n\n${link}\n\nThe invite expires in 3 days.\n`,
  }),
  twoFactorEnabled: (to: string): Mail => ({
    to,
    subject: 'Two-factor authentication enabled',
    text: 'Two-factor authentication was enabled on your Burrow account. If this was not you, reset your password and contact your administrator.\n',
  }),
  twoFactorDisabled: (to: string): Mail => ({
    to,
    subject: 'Two-factor authentication disabled',
    text: 'Two-factor authentication was disabled on your Burrow account. If this was not you, reset your password and contact your administrator.\n',
  }),
  backupCodeUsed: (to: string): Mail => ({
    to,
    subject: 'A two-factor backup code was used',
    text: 'A backup code was used to log in to your Burrow account. Each code works once; make new ones in your account settings if you are running low. If this was not you, reset your password now.\n',
  }),
}
